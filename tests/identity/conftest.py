"""The identity tests' loopback provider, one per module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_provider import FakeProvider


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as provider:
        yield provider
