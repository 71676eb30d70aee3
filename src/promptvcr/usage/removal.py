"""Removing the interactions the usage record proves unused: the one rewrite that ``promptvcr
prune`` and the plugin's ``--cassette-unused=drop`` share.

It lives with the usage record, below both the command line and the pytest plugin, so that
neither imports the other. Under the cassette's lock, and only when the file still holds what
the record counted: a cassette recorded into meanwhile is refused, never pruned by positions
that no longer mean the same interactions.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import CassetteError
from ..files import fileformat, guarded, storage

RUN_AGAIN = "Run the whole test suite (pytest, no -k, -m or single files), then prune."


def remove_interactions(path: Path, positions: list[int], expected: int) -> None:
    """Remove the interactions at ``positions`` from ``path``, which must still hold ``expected``."""
    with storage.cassette_lock(path):
        stored = guarded.read_stored_items(path)
        if stored is None:
            return
        if len(stored) != expected:  # recorded into meanwhile: positions no longer mean the same
            raise CassetteError(
                f"{path} changed while pruning; nothing was removed from it. {RUN_AGAIN}", path=path
            )
        kept = [item for position, item in enumerate(stored) if position not in set(positions)]
        storage.write_atomic(path, fileformat.dump_pieces(kept, path))
