"""The HTTP patches stay in place from one cassette test to the next.

Entering the first cassette patches every HTTP library the process has imported, and the
last exit removes the patches (:mod:`promptvcr.activation`). In a suite where test after
test enters its cassette, that is two rounds of patching per test, the larger part of a
cassette's entry (respx's ``mock.patch`` calls above all). So when the next test will enter a
cassette too, this test's exit leaves the patches in place: idle, with no cassette active,
they pass every request through. A test that enters none runs with the process as it was.
"""

from __future__ import annotations

import sys
from collections.abc import Generator

import pytest

from .. import vcr_compat
from ..settings import MARKER

__all__ = ["NAME", "enters_cassette"]

NAME = "promptvcr-held-patches"
_ACTIVATION = f"{__name__.partition('.')[0]}.activation"  # the top package's, at any depth


def enters_cassette(item: pytest.Item) -> bool:
    """Whether ``item`` runs in a cassette: our marker, our fixture, or an unmigrated
    ``@pytest.mark.vcr`` that this plugin runs in pytest-recording's place."""
    return (
        item.get_closest_marker(MARKER) is not None
        or "_promptvcr_cassette" in getattr(item, "fixturenames", ())
        or vcr_compat.applies(item)
    )


def _hold(held: bool) -> None:
    # Imported when first needed: a suite whose tests enter no cassette loads no more than before.
    if held or _ACTIVATION in sys.modules:
        from ... import activation

        activation.hold_patches(held)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    _hold(nextitem is not None and enters_cassette(nextitem))
    return (yield)


def pytest_unconfigure(config: pytest.Config) -> None:
    _hold(False)  # an interrupted run (-x, Ctrl-C) ends with nothing patched
