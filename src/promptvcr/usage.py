"""Usage fragments: what processes other than pytest's own did with cassettes, for the usage record.

``promptvcr prune`` deletes on the evidence of the usage record the pytest plugin writes
(:mod:`promptvcr.commands.run_record`). The plugin sees every cassette its own process exits,
but a test may replay through a child: a subprocess running the application, the
``promptvcr_serve`` fixture's server. Issue 42: three tests passed through such children,
prune deleted two of their cassettes, and the next run failed.

So the plugin names a folder in ``$PROMPTVCR_USAGE_DIR`` (:data:`ENV`) for the run, which
children inherit. A process with no exit watcher of its own (not a pytest process) that exits
a cassette while that variable is set writes what it did to a fragment file there, one per
process, rewritten atomically after each cassette exits (a child killed later loses nothing it
reported). The plugin reads the fragments after each test (so a fragment counts for the test
that started the child, and a failed test's children count as using all they opened) and at
the end of the session, and merges them into the record.

A fragment is the ``cassettes`` part of a usage record (plain JSON, version 1), so records of
several machines (sharded CI) merge the same way: ``promptvcr prune --record A --record B``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .commands.run_record import CassetteUsage

__all__ = ["ENV", "note", "read_fragments", "ready"]

ENV = "PROMPTVCR_USAGE_DIR"
_VERSION = 1

_lock = threading.Lock()
_seen: dict[str, CassetteUsage] = {}
_file: Path | None = None


def usage_of(cassette: Any) -> tuple[str, CassetteUsage]:
    """The resolved path of ``cassette`` and what this use of it did: how many interactions it
    held, and which of them it did not play (none, for a mode that does not read the file)."""
    from .commands.run_record import CassetteUsage

    interactions = cassette.interactions
    positions: list[int] = []
    if cassette.record_mode.reads_cassette:
        unplayed = {id(interaction) for interaction in cassette.unplayed}
        positions = [i for i, interaction in enumerate(interactions) if id(interaction) in unplayed]
    return os.path.realpath(cassette.path), CassetteUsage(len(interactions), positions)


def ready() -> None:
    """Import what :func:`note` needs, at a cassette's entry: a note is written at its exit,
    when the code under test may have dropped privileges or moved the package away."""
    from .commands import run_record  # noqa: F401


def note(cassette: Any, folder: str) -> None:
    """A cassette exited in this process, which has no usage tracker: add it to its fragment."""
    global _file
    path, usage = usage_of(cassette)
    usage.users = [f"process {os.getpid()}: {' '.join(sys.argv)[:200]}"]
    with _lock:
        known = _seen.get(path)
        _seen[path] = usage if known is None else known.merge(usage)
        if _file is None or _file.parent != Path(folder):
            _file = Path(folder) / f"{os.getpid()}-{uuid.uuid4().hex[:8]}.json"
        data = {"version": _VERSION, "cassettes": {p: vars(u) for p, u in _seen.items()}}
        temp = _file.with_name(f".{_file.name}.tmp")
        try:
            temp.write_text(json.dumps(data), encoding="utf-8")
            os.replace(temp, _file)
        except OSError as error:  # the run's folder is gone (pytest ended first): say so, once
            print(f"promptvcr: could not report cassette use to {folder}: {error}", file=sys.stderr)


def read_fragments(folder: Path, since: float = 0.0) -> dict[str, CassetteUsage]:
    """Every cassette the fragments in ``folder`` changed after ``since`` report, merged."""
    from .commands.run_record import CassetteUsage

    merged: dict[str, CassetteUsage] = {}
    try:
        files = [p for p in folder.iterdir() if p.suffix == ".json" and p.stat().st_mtime >= since]
    except OSError:
        return merged
    for file in files:
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
            cassettes = data["cassettes"] if data.get("version") == _VERSION else {}
            for path, fields in cassettes.items():
                usage = CassetteUsage(**fields)
                known = merged.get(path)
                merged[path] = usage if known is None else known.merge(usage)
        except (OSError, ValueError, TypeError, KeyError):
            continue  # being replaced right now: read again at the next collection
    return merged
