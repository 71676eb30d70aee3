"""Removing the interactions the usage record proves unused: the one rewrite that ``promptvcr
prune`` and the plugin's ``--cassette-unused=drop`` share.

It lives with the usage record, below both the command line and the pytest plugin, so that
neither imports the other. Under the cassette's lock, and only when the file still holds what
the record counted: a cassette recorded into meanwhile is refused, never pruned by positions
that no longer mean the same interactions.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..cassettes.bodyfiles import BODY_FOLDER, body_folder
from ..errors import CassetteError
from ..files import fileformat, guarded, storage

RUN_AGAIN = "Run the whole test suite (pytest, no -k, -m or single files), then prune."


@dataclass
class BodySweep:
    """What removing interactions did to the body files beside the cassette (see
    :mod:`promptvcr.cassettes.bodyfiles`): those deleted, and why any were kept."""

    deleted: list[Path] = field(default_factory=list)
    kept: str | None = None


def remove_interactions(path: Path, positions: list[int], expected: int) -> BodySweep:
    """Remove the interactions at ``positions`` from ``path``, which must still hold ``expected``;
    then the body files beside it that no file of its folder refers to any more (:func:`sweep_bodies`)."""
    with storage.cassette_lock(path):
        stored = guarded.read_stored_items(path)
        if stored is None:
            return BodySweep()
        if len(stored) != expected:  # recorded into meanwhile: positions no longer mean the same
            raise CassetteError(
                f"{path} changed while pruning; nothing was removed from it. {RUN_AGAIN}", path=path
            )
        kept = [item for position, item in enumerate(stored) if position not in set(positions)]
        storage.write_atomic(path, fileformat.dump_pieces(kept, path))
    return sweep_bodies(body_folder(path))


#: Any file's text naming a body file: what a cassette's reference holds (``path: bodies/sha256-...``).
_NAMED = re.compile(rb"sha256-([0-9a-f]{64})")
#: A body file younger than this is kept: a recording writes its body files before the cassette
#: that refers to them (and touches one it finds there already), so one this new may be about
#: to be referred to by a cassette being written now.
YOUNG_SECONDS = 600.0
_READ = 1 << 20


def sweep_bodies(folder: Path) -> BodySweep:
    """Delete the body files in ``folder/bodies`` that no file of ``folder`` names, only when that
    is proven: every other file of the folder is read (as bytes: a comment, a cassette written by
    hand or by another tool, an aside recording count too), and any one that cannot be read keeps
    them all. A body file written in the last :data:`YOUNG_SECONDS` is kept. Nothing but files
    named ``sha256-<64 hex digits>`` in ``bodies/`` is ever deleted."""
    bodies = folder / BODY_FOLDER
    try:
        stored = {entry.name[len("sha256-") :]: entry for entry in os.scandir(bodies) if _is_body(entry)}
    except FileNotFoundError:
        return BodySweep()
    except OSError as error:
        return BodySweep(kept=f"{bodies} cannot be listed ({error.strerror})")
    if not stored:
        return BodySweep()
    named: set[str] = set()
    try:
        for entry in os.scandir(folder):
            if entry.name != BODY_FOLDER and entry.is_file():  # a FIFO or a folder is no cassette
                named |= _names_in(Path(entry.path))
    except OSError as error:
        where = error.filename or folder
        return BodySweep(kept=f"{where} cannot be read ({error.strerror}), so no body file is proven unused")
    sweep = BodySweep()
    now = time.time()
    for digest, entry in sorted(stored.items()):
        if digest in named:
            continue
        try:
            if now - entry.stat().st_mtime < YOUNG_SECONDS:
                continue
            os.unlink(entry.path)
        except OSError:
            continue
        sweep.deleted.append(Path(entry.path))
    return sweep


def _is_body(entry: os.DirEntry[str]) -> bool:
    return _NAMED.fullmatch(entry.name.encode()) is not None and entry.is_file(follow_symlinks=False)


def _names_in(path: Path) -> set[str]:
    """Every body file's hash a file's bytes name, read a megabyte at a time (a cassette may
    hold large bodies inline, as older ones do). ``OSError`` when it cannot be read."""
    found: set[str] = set()
    tail = b""
    with open(path, "rb") as file:
        while piece := file.read(_READ):
            data = tail + piece
            found.update(match.decode() for match in _NAMED.findall(data))
            tail = data[-80:]
    return found
