"""The report's entries, from what a run did with a cassette or from cassette files as they are.

A run knows more than a file: what each request met (replayed, recorded, missed), what
verify found drifted. ``promptvcr report`` reads files alone, so each of its interactions
is shown as recorded, one entry per cassette.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..cassettes.models import Interaction
from ..errors import CassetteError
from ..files import guarded
from ..matching.key import request_key
from ..readouts.inventory import cassette_files
from .exchanges import drift_line, exchanges, miss
from .model import DriftLine, Entry
from .pricing import Prices

if TYPE_CHECKING:
    from ..cassette import Cassette

__all__ = ["add_cassette", "entries_of_files"]


def _why(cassette: Cassette, key: str, keys: list[str]) -> str:
    if not cassette.path.exists():
        return "the cassette does not exist"
    times = keys.count(key)
    if times:
        return f"recorded {times} time(s), and every recorded answer had already been played"
    return "no recorded request matches it"


def add_cassette(entry: Entry, cassette: Cassette, shown: str, prices: Prices) -> None:
    """Add to ``entry`` what its test did with ``cassette`` (named ``shown``), as it exits."""
    if shown not in entry.cassettes:
        entry.cassettes.append(shown)
    plays = cassette.played
    entry.exchanges.extend(
        exchanges([(p.request, p.response) for p in plays], [p.outcome for p in plays], prices)
    )
    if cassette.missed:
        interactions, rules = cassette.interactions, cassette.rules
        keys = [request_key(i.request, rules) for i in interactions]
        for request in cassette.missed:
            why = _why(cassette, request_key(request, rules), keys)
            entry.misses.append(miss(request, interactions, rules, why))
    for drift in cassette.drift:
        entry.drift.extend(drift_line(drift.where, line) for line in drift.differences)
    entry.cache_breaks.extend(
        _cache_breaks([Interaction(p.request, p.response) for p in plays if p.response])
    )
    for play in plays:
        if play.outcome == "tool-drift":
            where = f"{play.request.method} {play.request.url}"
            entry.tool_drift.extend(DriftLine(where, "tool drift", line) for line in play.tool_drift)


def _cache_breaks(interactions: list[Interaction]) -> list[DriftLine]:
    """One line per request that breaks its conversation's prompt cache (:mod:`..readouts.cachebreaks`)."""
    from ..readouts.cachebreaks import conversations

    return [
        DriftLine(
            f"interactions[{turn.position}] {conversation.endpoint} ({conversation.model})",
            "cache break",
            turn.break_text,
        )
        for conversation in conversations(interactions)
        for turn in conversation.breaks
    ]


def entries_of_files(paths: Iterable[Path], prices: Prices) -> tuple[list[Entry], list[str]]:
    """One entry per cassette file under ``paths`` (files, or folders searched for cassettes),
    and one message per file that could not be read (the report is made of the others)."""
    entries: list[Entry] = []
    problems: list[str] = []
    for path in cassette_files(paths):
        try:
            interactions = guarded.read_interactions(path)
            if interactions is None:
                raise guarded.missing(path)
        except CassetteError as error:
            problems.append(str(error))
            continue
        entry = Entry(name=str(path), cassettes=[str(path)])
        pairs = [(i.request, i.response) for i in interactions]
        entry.exchanges.extend(exchanges(pairs, ["recorded"] * len(pairs), prices))
        entry.cache_breaks.extend(_cache_breaks(interactions))
        entries.append(entry)
    return entries, problems
