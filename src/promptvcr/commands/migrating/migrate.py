"""``promptvcr migrate [PATH]``: a pytest-recording suite onto promptvcr, in place, once.

Converts every vcrpy cassette under PATH (promptvcr cassettes are left as they are, and a
file that would lose anything, such as cassetter's ``ws_interactions``, is not touched and
is listed), rewrites ``@pytest.mark.vcr`` markers and the ``vcr_config`` fixture, and prints
each thing it could not translate with the line to fix. Running it twice changes nothing the
second time.

It plans everything first (every file read, decoded and converted in memory), then applies
(each file atomically): a file it cannot decode, a read-only file or a symlink out of the tree
is skipped with one line, never a traceback half-way (issue 42). Source keeps every byte it
does not change: encoding, line endings, form feeds (:mod:`promptvcr.importers.sourcefile`).
``--dry-run`` prints the diff and writes nothing.
"""

from __future__ import annotations

import argparse
import difflib
import inspect
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ...importers.sourcefile import Source, read_source, refusal, write_source

_SKIP = frozenset({".git", ".venv", "venv", ".tox", ".nox", "node_modules", ".promptvcr", "__pycache__"})
_CASSETTES = (".yaml", ".yml", ".json")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", nargs="?", type=Path, default=Path("."), help="folder (default: here)")
    parser.add_argument(
        "--dry-run", action="store_true", help="print the diff of what would change, change nothing"
    )


def _files(root: Path) -> Iterator[Path]:
    if root.is_file():
        yield root
        return
    for path in sorted(root.rglob("*")):
        if path.is_file() and not _SKIP & set(path.relative_to(root).parts[:-1]):
            yield path


def _supported() -> frozenset[str]:
    from ...cassette import use_cassette

    names = set(inspect.signature(use_cassette).parameters) - {"path"}
    return frozenset(names | {"record_mode", "cassette_dir", "allowed_hosts"})


@dataclass
class _Plan:
    """Everything migrate will do, decided before anything is written."""

    cassettes: list[Path] = field(default_factory=list)
    sources: list[tuple[Path, Source, str]] = field(default_factory=list)  # path, as read, migrated
    kept: int = 0
    changes: list[str] = field(default_factory=list)
    todo: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def _plan(root: Path, files: list[Path]) -> _Plan:
    from ...importers.suite import migrate_source
    from ...importers.vcr import convert_vcr_file
    from ...importers.vcr_read import VcrReadError, read_vcr_file

    plan = _Plan()
    tree = root if root.is_dir() else root.parent
    for path in files:
        if not path.name.lower().endswith(_CASSETTES):
            continue
        try:
            layout = read_vcr_file(path).layout
        except VcrReadError:
            continue  # not a cassette (CI config, data): none of ours
        if layout == "promptvcr":
            plan.kept += 1
            continue
        converted = convert_vcr_file(path)
        if converted.error is not None or converted.skipped:
            why = converted.error or "; ".join(converted.skipped)
            plan.todo.append(f"{path}: cassette not converted, left as it is: {why}")
        elif (refused := refusal(path, tree)) is not None:
            plan.refused.append(refused)
        else:
            plan.cassettes.append(path)
    supported = _supported()
    configured = False  # a vcr_config or promptvcr_config somewhere: its matching is carried over
    for path in files:
        if path.suffix != ".py":
            continue
        try:
            source = read_source(path)
        except (OSError, SyntaxError, ValueError) as error:  # undecodable: not Python we can edit
            if b"vcr" in path.read_bytes():
                plan.refused.append(f"{path}: cannot be decoded ({error}); not rewritten")
            continue
        if "vcr" not in source.text:
            continue
        configured = configured or "def vcr_config" in source.text or "def promptvcr_config" in source.text
        text, report = migrate_source(path, supported=supported, text=source.text, newline=source.newline)
        if text != source.text:
            if (refused := refusal(path, tree)) is not None:
                plan.refused.append(refused)
                continue
            plan.sources.append((path, source, text))
        plan.changes.extend(report.changes)
        plan.todo.extend(report.todo)
    if not configured and (plan.cassettes or any(".mark.vcr ->" in line for line in plan.changes)):
        _default_matching(plan, tree)
    return plan


def _default_matching(plan: _Plan, tree: Path) -> None:
    """A suite without ``vcr_config`` matched by vcrpy's default (never bodies): write it out
    in the ``conftest.py`` at the top of the tree, so the migrated suite passes as it did."""
    from ...importers.suite import default_matching_conftest

    path = tree / "conftest.py"
    planned = next((i for i, (p, _, _) in enumerate(plan.sources) if p == path), None)
    if planned is not None:
        _, source, text = plan.sources[planned]
        plan.sources[planned] = (path, source, default_matching_conftest(text, source.newline))
    else:
        if path.exists() and (refused := refusal(path, tree)) is not None:
            plan.refused.append(refused)
            return
        try:
            source = read_source(path) if path.exists() else Source("", "utf-8", "\n")
        except (OSError, SyntaxError, ValueError) as error:
            plan.todo.append(
                f"{path}: cannot be read ({error}); write vcrpy's matching by hand (docs/migrating.md)"
            )
            return
        plan.sources.append((path, source, default_matching_conftest(source.text, source.newline)))
    plan.changes.append(
        f"{path}: the suite had no vcr_config: vcrpy's default matching (never bodies) written out as "
        "promptvcr_config, so it passes as it did; remove that fixture to compare bodies"
    )


def _diff(path: Path, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    return "".join(line if line.endswith(("\n", "\r")) else line + "\n" for line in lines)


def run(args: argparse.Namespace) -> int:
    from ...importers.inplace import convert_in_place

    root: Path = args.path
    if not root.exists():
        print(f"promptvcr migrate: no such file or folder: {root}")
        return 2
    plan = _plan(root, list(_files(root)))
    failed: list[str] = []
    said: list[str] = []  # each credential removed or masked, per file: nothing changes unsaid
    masked = 0
    converted = 0
    if args.dry_run:
        converted = len(plan.cassettes)
        for path, source, text in plan.sources:
            sys.stdout.write(_diff(path, source.text, text))
    else:  # apply: each file atomically; one that fails is reported, the others still done
        for path in plan.cassettes:
            report = convert_in_place(path)
            if report.error is not None:
                failed.append(f"{path}: cassette not converted: {report.error}")
            else:
                converted += 1
                masked += len(report.masked)
                if report.masked or report.notes:
                    said.append(f"{path}: {len(report.masked)} credential(s) removed or masked")
                    said.extend(f"  {line}" for line in report.masked)
                    said.extend(f"  note: {note}" for note in report.notes)
        for path, source, text in plan.sources:
            try:
                write_source(path, source, text)
            except OSError as error:
                failed.append(f"{path}: not rewritten ({error.strerror or error})")
    for line in (*said, *plan.changes):
        print(line)
    for line in (*plan.refused, *failed):
        print(f"skipped {line}")
    verb = "would convert" if args.dry_run else "converted"
    print(f"cassettes: {verb} {converted}, {plan.kept} already promptvcr (left as they are)")
    if not args.dry_run:
        print(f"credentials: {masked} removed or masked (each as <redacted:...>, listed above)")
    print(f"source: {len(plan.changes)} change(s){' (dry run: none written)' if args.dry_run else ''}")
    todo = [*plan.todo, *plan.refused, *failed]
    if todo:
        print(f"left to do by hand ({len(todo)}):")
        for line in todo:
            print(f"  {line}")
        return 1
    print("nothing left to do by hand; pytest-recording can be uninstalled.")
    return 0
