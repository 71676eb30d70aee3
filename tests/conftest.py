"""Shared fixtures: a loopback fake provider, started and stopped by the test that needs it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fake_provider import FakeProvider


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    with FakeProvider() as server:
        yield server


@pytest.fixture(autouse=True)
def _no_env_record_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests choose their mode explicitly; a developer's PROMPTVCR_RECORD_MODE must not leak in."""
    monkeypatch.delenv("PROMPTVCR_RECORD_MODE", raising=False)
