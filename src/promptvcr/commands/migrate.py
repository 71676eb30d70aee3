"""``promptvcr migrate [PATH]``: a pytest-recording suite onto promptvcr, in place, once.

Converts every vcrpy cassette under PATH (promptvcr cassettes are left as they are, and a
file that would lose anything is not touched), rewrites ``@pytest.mark.vcr`` markers and
the ``vcr_config`` fixture, and prints each thing it could not translate with the line to
fix. Running it twice changes nothing the second time.
"""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Iterator
from pathlib import Path

HELP = "move a pytest-recording/vcrpy suite to promptvcr: cassettes, markers and vcr_config, in place"
_SKIP = frozenset({".git", ".venv", "venv", ".tox", ".nox", "node_modules", ".promptvcr", "__pycache__"})
_CASSETTES = (".yaml", ".yml", ".json")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", nargs="?", type=Path, default=Path("."), help="folder (default: here)")
    parser.add_argument("--dry-run", action="store_true", help="say what would change, change nothing")


def _files(root: Path) -> Iterator[Path]:
    if root.is_file():
        yield root
        return
    for path in sorted(root.rglob("*")):
        if path.is_file() and not _SKIP & set(path.relative_to(root).parts[:-1]):
            yield path


def _supported() -> frozenset[str]:
    from ..cassette import use_cassette

    names = set(inspect.signature(use_cassette).parameters) - {"path"}
    return frozenset(names | {"record_mode", "cassette_dir", "allowed_hosts"})


def run(args: argparse.Namespace) -> int:
    from ..importers.inplace import convert_in_place
    from ..importers.suite import migrate_source
    from ..importers.vcr_read import VcrReadError, read_vcr_file

    root: Path = args.path
    if not root.exists():
        print(f"promptvcr migrate: no such file or folder: {root}")
        return 2
    converted = kept = 0
    todo: list[str] = []
    changes: list[str] = []
    files = list(_files(root))
    for path in files:
        if not path.name.lower().endswith(_CASSETTES):
            continue
        try:
            layout = read_vcr_file(path).layout
        except VcrReadError:
            continue  # not a cassette (CI config, data): none of ours
        if layout == "promptvcr":
            kept += 1
            continue
        if args.dry_run:
            converted += 1
            continue
        report = convert_in_place(path)
        if report.error is not None:
            todo.append(f"{path}: cassette not converted: {report.error}")
        else:
            converted += 1
    supported = _supported()
    for path in files:
        if path.suffix != ".py" or "vcr" not in path.read_text(encoding="utf-8", errors="replace"):
            continue
        text, source_report = migrate_source(path, supported=supported)
        if text != path.read_text(encoding="utf-8") and not args.dry_run:
            path.write_text(text, encoding="utf-8")
        changes.extend(source_report.changes)
        todo.extend(source_report.todo)
    for line in changes:
        print(line)
    verb = "would convert" if args.dry_run else "converted"
    print(f"cassettes: {verb} {converted}, {kept} already promptvcr (left as they are)")
    print(f"source: {len(changes)} change(s){' (dry run: none written)' if args.dry_run else ''}")
    if todo:
        print(f"left to do by hand ({len(todo)}):")
        for line in todo:
            print(f"  {line}")
        return 1
    print("nothing left to do by hand; pytest-recording can be uninstalled.")
    return 0
