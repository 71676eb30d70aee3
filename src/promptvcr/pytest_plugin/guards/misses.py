"""Misses a test never saw: caught by the code under test, or turned into another error.

A framework may catch a :class:`~promptvcr.CassetteMiss` and go on, or turn it into an error
of its own (LangChain's ``ainvoke`` gathers results, filters only ``Exception`` and then
fails with ``AttributeError: 'CassetteMiss' object has no attribute 'generations'``). The
cassette remembers every miss; this module finds those of the cassettes a test used (its
``cassette`` fixture, and every cassette that exited while the test ran) so that the test
fails with the miss message rather than passing, or failing with an unrelated error.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING

import pytest

from ...errors import NOTE_START, CassetteMiss

if TYPE_CHECKING:
    from ...cassette import Cassette

__all__ = ["MissWatch", "hidden_miss", "replaced_text"]

_EXITED = pytest.StashKey[list["Cassette"]]()
_running: list[list[Cassette]] = []  # the exits collected for each test running, innermost last


def _misses(cassette: Cassette) -> list[CassetteMiss]:
    return cassette._misses  # every miss raised for it, the caught ones too


class MissWatch:
    """A pytest plugin object: the cassettes that exited with misses while each test ran."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, object, object]:
        from ...activation import watch_exits

        exited: list[Cassette] = []
        item.stash[_EXITED] = exited
        _running.append(exited)

        def seen(cassette: Cassette) -> None:
            # Only the innermost test's: a test that runs pytest in-process (pytester) is not
            # blamed for the misses of the tests it runs.
            if _running and _running[-1] is exited and _misses(cassette):
                exited.append(cassette)

        stop = watch_exits(seen)
        try:
            return (yield)
        finally:
            stop()
            _running.remove(exited)


def hidden_miss(
    item: pytest.Item, fixture_cassette: Cassette | None, error: BaseException | None
) -> tuple[CassetteMiss, int] | None:
    """The first miss of the test's cassettes, and how many there were; ``None`` without any.

    The ``cassette`` fixture's is still active, and counts in any case. A cassette the test
    entered itself raised its miss as it exited, or added it to the notes of the error the
    body raised instead: it counts only when the test failed with such an error.
    """
    cassettes = list(item.stash.get(_EXITED, ())) if error is not None and _hides_a_miss(error) else []
    if fixture_cassette is not None:
        cassettes.append(fixture_cassette)
    misses = [miss for cassette in cassettes for miss in _misses(cassette)]
    return (misses[0], len(misses)) if misses else None


def _hides_a_miss(error: BaseException) -> bool:
    """Whether a cassette noted a miss on ``error`` or an error it came from (3.10: any error)."""
    if not hasattr(error, "add_note"):
        return True
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if any(str(note).startswith(NOTE_START) for note in getattr(current, "__notes__", ())):
            return True
        current = current.__cause__ or current.__context__
    return False


def replaced_text(miss: CassetteMiss, count: int, error: BaseException | None, original: str) -> str:
    """The failure text of a test whose miss was caught (``error`` is None) or replaced by
    ``error``: the miss first, then the failure as pytest showed it."""
    if error is None:
        cassette = miss.cassette if miss.cassette is not None else "its cassette"
        return str(CassetteMiss.swallowed(miss, count, cassette))
    shown = f"{type(error).__name__}: {error}".splitlines()[0]
    return (
        f"{miss.message}\n\nThe test failed with {shown}\nbecause the code under test caught this "
        f"CassetteMiss and raised that error instead ({count} request(s) missed in all); the miss "
        f"above is the cause. The failure as raised:\n\n{original}"
    )
