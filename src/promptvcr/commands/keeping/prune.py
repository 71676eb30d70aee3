"""``promptvcr prune [PATH...]``: remove the interactions the last test run proves unused.

It deletes only on the evidence of the usage record the pytest plugin writes at the end of
each run (:mod:`promptvcr.usage.run_record`; children of the run, subprocesses and
``promptvcr serve``, report into it through :mod:`promptvcr.usage`; a standalone serve writes
its own with ``--usage-record``), and refuses when that
evidence is missing, partial (tests deselected, failed or not run) or older than a cassette.
An interaction goes only when every use of its cassette left it unplayed.

A whole cassette no test opened is never deleted on that absence alone: a script, a notebook
or a tool outside the tests may be what uses it (issue 42: the Quickstart's own ``hello.yaml``
was deleted). Prune lists such files and keeps them; one goes only when named on the command
line (``promptvcr prune cassettes/old.yaml``). Everything is planned first, then applied; what
could not be applied is reported and the exit status is 1.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from ...cassettes.bodyfiles import body_folder
from ...errors import CassetteError
from ...readouts.inventory import CassetteSummary, find_cassettes
from ...usage.removal import RUN_AGAIN as _RUN_AGAIN
from ...usage.removal import BodySweep, remove_interactions, sweep_bodies
from ...usage.run_record import RECORD_PATH, UsageRecord
from .. import _output


@dataclass
class Plan:
    """What prune removes: whole files, and interaction positions in the files it keeps."""

    files: list[Path] = field(default_factory=list)
    """Cassettes no test opened that were named on the command line: deleted."""
    interactions: dict[Path, list[int]] = field(default_factory=dict)
    unowned: list[Path] = field(default_factory=list)
    """Cassettes no test opened, found in a folder: kept (a script may use them), and listed."""
    skipped_tests: list[Path] = field(default_factory=list)
    """Cassettes of skipped tests: kept, named or not."""


def _print_sweep(out: Console, path: Path, sweep: BodySweep) -> None:
    """The body files removed beside ``path`` (none a cassette there refers to), or why none were."""
    for body in sweep.deleted:
        out.print(f"removed {body} (no cassette beside it refers to it)", markup=False)
    if sweep.kept is not None:
        out.print(f"kept the body files beside {path}: {sweep.kept}", markup=False)


class Refusal(Exception):
    """Prune will not delete on this evidence; the message says why and what to run."""


def _under(path: Path, folders: list[str]) -> bool:
    return any(path == Path(folder) or path.is_relative_to(folder) for folder in folders)


def plan(root: Path, record: UsageRecord, named: frozenset[Path] = frozenset()) -> Plan:
    """What to remove under ``root`` (a folder, or one cassette named on the command line; the
    ``named`` ones may go whole); :class:`Refusal` when the record cannot justify any of it."""
    if record.incomplete:
        reasons = "; ".join(record.incomplete)
        raise Refusal(
            f"The last test run did not cover the whole suite ({reasons}), so it cannot show "
            f"what is unused. {_RUN_AGAIN}"
        )
    result = Plan()
    for path, found in find_cassettes(root):
        if not isinstance(found, CassetteSummary):
            continue  # not a promptvcr cassette: never ours to delete
        resolved = path.resolve()
        _check_unchanged(path, str(resolved), found.modified, record)
        usage = record.cassettes.get(str(resolved))
        # Owned by a test that was skipped: it may need any interaction, whoever else opened the file.
        protected = _under(resolved, record.protected) or resolved.parent.name in record.protected_modules
        if usage is None:
            if protected:
                result.skipped_tests.append(path)
            elif resolved in named:
                result.files.append(path)
            else:
                result.unowned.append(path)
        elif usage.unplayed and usage.interactions == len(found.interactions) and not protected:
            result.interactions[path] = list(usage.unplayed)
    return result


def _check_unchanged(path: Path, resolved: str, modified: float, record: UsageRecord) -> None:
    """The cassette is the one the run used: by its bytes when shards on other machines wrote
    the record (a checkout renews file times), else by its file time."""
    if record.digests:
        from ...usage.shards import digest

        if resolved in record.digests and digest(path) != record.digests[resolved]:
            raise Refusal(
                f"{path} changed after the shards ran, so their records are out of date. {_RUN_AGAIN}"
            )
    elif modified > record.finished:
        raise Refusal(
            f"{path} changed after the last test run, so the usage record is out of date. {_RUN_AGAIN}"
        )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="folders to prune (default: .), or cassettes: one named here that no test used is deleted",
    )
    parser.add_argument("--dry-run", action="store_true", help="print what would be removed, remove nothing")
    parser.add_argument(
        "--record",
        type=Path,
        action="append",
        help=f"the usage record the last test run wrote (default: {RECORD_PATH}, under the pytest rootdir); "
        "for a run split in shards, each shard's record (--record once per file) or their folder",
    )


def _records(paths: list[Path] | None) -> UsageRecord:
    """The record to prune on: one run's, or those of the shards of one run judged together
    (files, or a folder of them: see :mod:`.shards`)."""
    from ...usage.shards import read_records, union

    return union(read_records(paths or [RECORD_PATH]), Path.cwd())


def _plan_all(paths: list[Path], record: UsageRecord) -> Plan:
    named = frozenset(path.resolve() for path in paths if path.is_file())
    total = Plan()
    seen: set[Path] = set()
    for path in paths:
        part = plan(path, record, named)
        total.files.extend(p for p in part.files if p.resolve() not in seen)
        total.unowned.extend(p for p in part.unowned if p.resolve() not in seen)
        total.skipped_tests.extend(p for p in part.skipped_tests if p.resolve() not in seen)
        for cassette, positions in part.interactions.items():
            if cassette.resolve() not in seen:
                total.interactions[cassette] = positions
        seen.update(
            p.resolve() for p in (*part.files, *part.unowned, *part.skipped_tests, *part.interactions)
        )
    return total


def run(args: argparse.Namespace) -> int:
    out = _output.console()
    paths: list[Path] = args.paths or [Path(".")]
    missing = [str(path) for path in paths if not path.exists()]
    if missing:
        out.print(
            f"promptvcr prune: no such file or folder: {', '.join(missing)}; give the folder of your "
            "cassettes, or cassette files.",
            markup=False,
        )
        return 1
    try:
        record = _records(args.record)
        todo = _plan_all(paths, record)
    except (CassetteError, Refusal) as error:
        out.print(f"promptvcr prune: {error}", markup=False)
        return 1
    verb = "would remove" if args.dry_run else "removed"
    failed: list[str] = []
    removed_files = removed = 0
    for path in todo.files:
        if not args.dry_run:
            try:
                path.unlink()
            except OSError as error:
                failed.append(f"{path}: not removed ({error.strerror or error})")
                continue
            _print_sweep(out, path, sweep_bodies(body_folder(path)))
        removed_files += 1
        out.print(f"{verb} {path} (named here, and no test used it)", markup=False)
    for path, positions in todo.interactions.items():
        if not args.dry_run:
            try:
                held = record.cassettes[str(path.resolve())].interactions
                sweep = remove_interactions(path, positions, held)
            except CassetteError as error:
                failed.append(f"{path}: nothing removed: {error}")
                continue
            _print_sweep(out, path, sweep)
        removed += len(positions)
        shown = ", ".join(f"interactions[{p}]" for p in positions)
        out.print(f"{verb} {shown} from {path} (no test played them)", markup=False)
    for path in todo.unowned:
        out.print(
            f"kept {path}: no test of the run used it (a script's?); name it to remove it", markup=False
        )
    for path in todo.skipped_tests:
        out.print(f"kept {path}: a skipped test's, which may need it", markup=False)
    for line in failed:
        out.print(f"skipped {line}", markup=False)
    done = "would be removed" if args.dry_run else "removed"
    summary = f"{removed_files} cassette(s) and {removed} interaction(s) {done}"
    if todo.unowned or todo.skipped_tests:
        count = len(todo.unowned) + len(todo.skipped_tests)
        summary += f"; {count} cassette(s) no test used kept (listed above)"
    if failed:
        summary += f"; {len(failed)} skipped (listed above)"
    out.print(
        summary
        + ("; run without --dry-run to remove them." if args.dry_run and (todo.files or removed) else ".")
    )
    return 1 if failed else 0
