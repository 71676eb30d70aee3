"""``promptvcr prune [DIR]``: remove the cassettes and interactions the last test run did not use.

It deletes only on the evidence of the usage record the pytest plugin writes at the end of
each run (:mod:`promptvcr.usage`), and refuses when that evidence is missing, partial (tests
deselected, failed or not run) or older than a cassette. A cassette no test opened goes
only when it lies in a folder whose tests all ran and no skipped test may own it; an
interaction goes only when every test that opened its cassette left it unplayed. Cassettes
shrink here and nowhere else: rewritten atomically, under the same lock recording uses.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import CassetteError
from ..files import fileformat, storage
from . import _output
from .inventory import CassetteSummary, find_cassettes
from .run_record import RECORD_PATH, UsageRecord, read_record

HELP = "remove the cassettes and interactions the last test run did not use"

_RUN_AGAIN = "Run the whole test suite (pytest, no -k, -m or single files), then prune."


@dataclass
class Plan:
    """What prune removes: whole files, and interaction positions in the files it keeps."""

    files: list[Path] = field(default_factory=list)
    interactions: dict[Path, list[int]] = field(default_factory=dict)
    kept_out_of_reach: int = 0
    """Cassettes no test opened that the run cannot vouch for: outside its test folders, or protected."""


class Refusal(Exception):
    """Prune will not delete on this evidence; the message says why and what to run."""


def _under(path: Path, folders: list[str]) -> bool:
    return any(path == Path(folder) or path.is_relative_to(folder) for folder in folders)


def plan(root: Path, record: UsageRecord) -> Plan:
    """What to remove under ``root``; :class:`Refusal` when the record cannot justify any of it."""
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
        if found.modified > record.finished:
            raise Refusal(
                f"{path} changed after the last test run, so the usage record is out of date. {_RUN_AGAIN}"
            )
        resolved = path.resolve()
        usage = record.cassettes.get(str(resolved))
        # Owned by a test that was skipped: it may need any interaction, whoever else opened the file.
        protected = _under(resolved, record.protected) or resolved.parent.name in record.protected_modules
        if usage is None:
            if _under(resolved, record.test_dirs) and not protected:
                result.files.append(path)
            else:
                result.kept_out_of_reach += 1
        elif usage.unplayed and usage.interactions == len(found.interactions) and not protected:
            result.interactions[path] = list(usage.unplayed)
    return result


def _remove_interactions(path: Path, positions: list[int], expected: int) -> None:
    with storage.cassette_lock(path):
        text = storage.read_text(path)
        if text is None:
            return
        stored = fileformat.load_document(text, path)
        if len(stored) != expected:  # recorded into meanwhile: positions no longer mean the same
            raise CassetteError(
                f"{path} changed while pruning; nothing was removed from it. {_RUN_AGAIN}", path=path
            )
        kept = [item for position, item in enumerate(stored) if position not in set(positions)]
        storage.write_atomic(path, fileformat.dump_pieces(kept, path))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", nargs="?", type=Path, default=Path("."), help="folder to prune (default: .)")
    parser.add_argument("--dry-run", action="store_true", help="print what would be removed, remove nothing")
    parser.add_argument(
        "--record",
        type=Path,
        default=RECORD_PATH,
        help=f"the usage record the last test run wrote (default: {RECORD_PATH}, under the pytest rootdir)",
    )


def run(args: argparse.Namespace) -> int:
    out = _output.console()
    if not args.dir.is_dir():
        out.print(f"promptvcr prune: {args.dir} is not a folder; give the folder of your cassettes.")
        return 1
    try:
        record = read_record(args.record)
        todo = plan(args.dir, record)
    except (CassetteError, Refusal) as error:
        out.print(f"promptvcr prune: {error}", markup=False)
        return 1
    verb = "would remove" if args.dry_run else "removed"
    sizes = {path: len(positions) for path, positions in todo.interactions.items()}
    for path in todo.files:
        if not args.dry_run:
            path.unlink()
        out.print(f"{verb} {path} (no test used it)", markup=False)
    for path, positions in todo.interactions.items():
        if not args.dry_run:
            try:
                _remove_interactions(path, positions, record.cassettes[str(path.resolve())].interactions)
            except CassetteError as error:
                out.print(f"promptvcr prune: {error}", markup=False)
                return 1
        shown = ", ".join(f"interactions[{p}]" for p in positions)
        out.print(f"{verb} {shown} from {path} (no test played them)", markup=False)
    removed = sum(sizes.values())
    done = "would be removed" if args.dry_run else "removed"
    summary = f"{len(todo.files)} cassette(s) and {removed} interaction(s) {done}"
    if todo.kept_out_of_reach:
        summary += (
            f"; {todo.kept_out_of_reach} cassette(s) no test opened kept "
            "(outside the folders whose tests ran, or owned by skipped tests)"
        )
    out.print(
        summary
        + ("; run without --dry-run to remove them." if args.dry_run and (todo.files or removed) else ".")
    )
    return 0
