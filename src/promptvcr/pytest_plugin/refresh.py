"""``--cassette-unused=drop``: a passing test's cassette loses the interactions it no longer sends.

With ``--record-mode=record`` this re-records in one step: what the test now sends and the
cassette misses is recorded, what the cassette holds and the test no longer sends is
removed, and every other interaction stays as it was. Only a test that passed drops
anything (a failing test may simply not have reached its later requests).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..files import fileformat, storage

if TYPE_CHECKING:
    from ..cassette import Cassette

__all__ = ["drop_unplayed"]


def drop_unplayed(active: Cassette) -> list[str]:
    """Remove the unplayed interactions of ``active`` from its file; the ones removed, described."""
    unplayed = {id(interaction) for interaction in active.unplayed}
    held = active.interactions
    positions = [position for position, interaction in enumerate(held) if id(interaction) in unplayed]
    if not positions:
        return []
    with storage.cassette_lock(active.path):
        text = storage.read_text(active.path)
        if text is None:
            return []
        stored = fileformat.load_document(text, active.path)
        for position in positions:  # the file must still hold what the cassette loaded
            if position >= len(stored):
                return []
            request = fileformat.interaction_from_data(stored[position], active.path, position).request
            if (request.method, request.url) != (held[position].request.method, held[position].request.url):
                return []
        kept = [item for position, item in enumerate(stored) if position not in set(positions)]
        storage.write_atomic(active.path, fileformat.dump_pieces(kept, active.path))
    return [f"interactions[{p}] {held[p].request.method} {held[p].request.path}" for p in positions]
