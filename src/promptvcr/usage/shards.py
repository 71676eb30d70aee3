"""The usage records of a suite split in shards (pytest-split, a CI matrix), judged as one run.

Each shard runs part of the suite and writes its record with its identity
(``.promptvcr/usage-<shard>.json``; ``--promptvcr-shard``, ``$PROMPTVCR_SHARD`` or
pytest-split's ``--group``/``--splits``). Alone, a shard's record cannot show what is unused:
its split deselected tests. Together, the records show it when every test any shard collected
ran in some shard, and every shard of the split is there (``2/3`` given, ``1/3`` and ``3/3`` must
be too); :func:`union` then merges them as pytest-xdist workers' records merge (an interaction
is unused only when no shard played it), and the split's deselection is no longer a reason to
refuse. Anything else a shard could not vouch for still is: a selection by path (``pytest
tests/a``, ``pytest tests/b/test_x.py``: the tests outside it were never collected, so no
record can show that another shard ran them, nor that its record is here), a failed test, an
interruption.

Shards run on other machines, in other folders: each record's paths are moved from the root
it was written under onto the folder prune runs in, and a cassette is known to be the one a
shard used by its bytes (sha256), not by its file time, which a fresh checkout renews.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ..errors import CassetteError
from .run_record import DESELECTED, RECORD_PATH, UsageRecord, read_record

__all__ = ["digest", "read_records", "record_path", "union"]

_SHOWN = 5


def record_path(root: Path, shard: str) -> Path:
    """Where a run writes its record: one file per shard, so that a folder can hold them all."""
    if not shard:
        return root / RECORD_PATH
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", shard).strip("-") or "shard"
    return root / RECORD_PATH.parent / f"usage-{safe}.json"


def digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


def read_records(paths: list[Path]) -> list[UsageRecord]:
    """The records at ``paths``: files, or folders of them (every ``*.json`` in the folder)."""
    records: list[UsageRecord] = []
    for path in paths:
        if path.is_dir():
            files = sorted(path.glob("*.json"))
            if not files:
                raise CassetteError(
                    f"The folder {path} holds no usage record (*.json). Give the records each shard "
                    "wrote (.promptvcr/usage-<shard>.json), or their folder.",
                    path=path,
                )
            records.extend(read_record(file) for file in files)
        elif not path.exists() and (shards := sorted(path.parent.glob("usage-*.json"))):
            raise CassetteError(
                f"There is no usage record at {path}, but {len(shards)} shard record(s) beside it "
                f"({', '.join(shard.name for shard in shards)}): prune on them with --record {path.parent}",
                path=path,
            )
        else:
            records.append(read_record(path))
    return records


def _moved(path: str, old: str, new: str) -> str:
    if old and path == old:
        return new
    if old and path.startswith(old.rstrip("/") + "/"):
        return new.rstrip("/") + path[len(old.rstrip("/")) :]
    return path


def _rebased(record: UsageRecord, root: Path) -> UsageRecord:
    """``record`` with its paths moved from the root it was written under onto ``root``."""
    old, new = record.root, str(root.resolve())
    if not old or old == new:
        return record
    record.cassettes = {_moved(path, old, new): usage for path, usage in record.cassettes.items()}
    record.digests = {_moved(path, old, new): value for path, value in record.digests.items()}
    record.test_dirs = [_moved(path, old, new) for path in record.test_dirs]
    record.protected = [_moved(path, old, new) for path in record.protected]
    record.root = new
    return record


def union(records: list[UsageRecord], root: Path) -> UsageRecord:
    """One record for prune: a whole run's as it is, or the shards' merged and judged together."""
    if len(records) == 1 and not records[0].shard:
        return records[0]
    records = [_rebased(record, root) for record in records]
    merged = UsageRecord(finished=min(record.finished for record in records), root=str(root.resolve()))
    for record in records:
        merged.merge(record)
    merged.incomplete = sorted({*merged.incomplete, *_gaps(records, merged)})
    return merged


def _gaps(records: list[UsageRecord], merged: UsageRecord) -> list[str]:
    """Why the shards together do not cover the suite; none when they do."""
    shards = [record.shard for record in records]
    if not all(shards):
        return list(merged.selection) or (
            ["a record of a whole run was given with others; give one whole run's, or every shard's"]
            if any(shards)
            else []
        )
    twice = sorted({shard for shard in shards if shards.count(shard) > 1})
    if twice:
        return [f"shard {', '.join(twice)} was given twice (an old record beside a new one?)"]
    gaps = [reason for reason in merged.selection if reason != DESELECTED]  # a path: never answered
    gaps.extend(_absent_shards(shards))
    missing = sorted(set(merged.collected) - set(merged.ran))
    if not missing:
        if not gaps:
            merged.selection = []
        return gaps
    shown = ", ".join(missing[:_SHOWN]) + (
        f" and {len(missing) - _SHOWN} more" if len(missing) > _SHOWN else ""
    )
    return [
        *gaps,
        f"{len(missing)} test(s) collected ran in none of the shards given ({', '.join(sorted(shards))}): "
        f"{shown}; give every shard's record",
    ]


def _absent_shards(shards: list[str]) -> list[str]:
    """The shards of a split named ``GROUP/SPLITS`` (pytest-split's) whose records are not given."""
    split = [re.fullmatch(r"(\d+)/(\d+)", shard) for shard in shards]
    totals = {int(match.group(2)) for match in split if match is not None}
    if len(totals) != 1 or any(match is None for match in split):
        return []
    (total,) = totals
    given = {int(match.group(1)) for match in split if match is not None}
    absent = [f"{group}/{total}" for group in range(1, total + 1) if group not in given]
    if not absent:
        return []
    return [f"the record of shard {', '.join(absent)} is missing; give every shard's record"]
