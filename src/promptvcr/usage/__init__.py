"""The usage record and its fragments: what a run, and every process it started, played of each cassette.

``promptvcr prune`` deletes on the evidence of the usage record the pytest plugin writes
(:mod:`promptvcr.usage.run_record`). The plugin sees every cassette its own process exits,
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

A process no pytest run watches, ``promptvcr serve`` driven by a suite in another language,
keeps the same account of the cassettes it leaves (:class:`Used`) and writes it as a whole
usage record of its own when it stops (``--usage-record FILE``).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .run_record import CassetteUsage

__all__ = ["ENV", "Used", "note", "read_fragments", "ready"]

ENV = "PROMPTVCR_USAGE_DIR"
_VERSION = 1

_lock = threading.Lock()
_file: Path | None = None


def usage_of(cassette: Any) -> tuple[str, CassetteUsage]:
    """The resolved path of ``cassette`` and what this use of it did: how many interactions it
    held, and which of them it did not play (none, for a mode that does not read the file)."""
    from .run_record import CassetteUsage

    interactions = cassette.interactions
    positions: list[int] = []
    if cassette.record_mode.reads_cassette:
        unplayed = {id(interaction) for interaction in cassette.unplayed}
        positions = [i for i, interaction in enumerate(interactions) if id(interaction) in unplayed]
    return os.path.realpath(cassette.path), CassetteUsage(len(interactions), positions)


def ready() -> None:
    """Import what :func:`note` needs, at a cassette's entry: a note is written at its exit,
    when the code under test may have dropped privileges or moved the package away."""
    from . import run_record  # noqa: F401


class Used:
    """What one process did with the cassettes it left, merged per cassette (each use of a
    cassette started again counts: an interaction is unplayed only when no use played it)."""

    def __init__(self, user: str) -> None:
        self.user = user
        self.cassettes: dict[str, CassetteUsage] = {}
        #: Uses whose test failed (``POST /_promptvcr/stop`` with ``"passed": false``).
        self.failed = 0
        self._lock = threading.Lock()

    def add(self, cassette: Any, *, passed: bool = True) -> dict[str, CassetteUsage]:
        """Add a use of ``cassette``, which has exited; a copy of what is known now. A use by a
        test that failed may have stopped before playing everything: it counts as using all."""
        path, usage = usage_of(cassette)
        usage.users = [self.user]
        if not passed:
            usage.unplayed = []
        with self._lock:
            self.failed += not passed
            known = self.cassettes.get(path)
            self.cassettes[path] = usage if known is None else known.merge(usage)
            return dict(self.cassettes)

    def write_record(self, path: Path, incomplete: list[str]) -> None:
        """A usage record of this process's whole run (``promptvcr serve --usage-record``), for
        ``promptvcr prune --record``. ``root`` is left empty: the paths are absolute and this
        run's own, so a prune merging it with pytest's record does not move them."""
        from .run_record import UsageRecord

        with self._lock:
            reasons = list(incomplete)
            if self.failed:
                reasons.append(f"{self.failed} test(s) failed (their stop said passed: false)")
            record = UsageRecord(finished=time.time(), incomplete=reasons, cassettes=dict(self.cassettes))
        path.parent.mkdir(parents=True, exist_ok=True)
        record.write(path)


_used: Used | None = None


def note(cassette: Any, folder: str) -> None:
    """A cassette exited in this process, which has no usage tracker: add it to its fragment."""
    global _file, _used
    with _lock:  # one note at a time: a later note's file never holds less than an earlier one's
        if _used is None:
            _used = Used(f"process {os.getpid()}: {' '.join(sys.argv)[:200]}")
        seen = _used.add(cassette)
        if _file is None or _file.parent != Path(folder):
            _file = Path(folder) / f"{os.getpid()}-{uuid.uuid4().hex[:8]}.json"
        data = {"version": _VERSION, "cassettes": {p: vars(u) for p, u in seen.items()}}
        temp = _file.with_name(f".{_file.name}.tmp")
        try:
            temp.write_text(json.dumps(data), encoding="utf-8")
            os.replace(temp, _file)
        except OSError as error:  # the run's folder is gone (pytest ended first): say so, once
            print(f"promptvcr: could not report cassette use to {folder}: {error}", file=sys.stderr)


def read_fragments(folder: Path, since: float = 0.0) -> dict[str, CassetteUsage]:
    """Every cassette the fragments in ``folder`` changed after ``since`` report, merged."""
    from .run_record import CassetteUsage

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
