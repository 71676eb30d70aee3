"""``promptvcr import-vcr SRC... --out DIR``: convert vcrpy cassettes into promptvcr ones."""

from __future__ import annotations

import argparse
from pathlib import Path

from ...importers import import_vcr


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "sources", nargs="+", type=Path, metavar="SRC", help="vcrpy cassette files or folders"
    )
    parser.add_argument(
        "--out", required=True, type=Path, metavar="DIR", help="folder to write promptvcr cassettes to"
    )
    parser.add_argument("--quiet", action="store_true", help="print only problems and the summary")


def run(args: argparse.Namespace) -> int:
    missing = [str(p) for p in args.sources if not p.exists()]
    if missing:
        print(f"promptvcr import-vcr: no such file or folder: {', '.join(missing)}")
        return 2
    report = import_vcr(args.sources, args.out)
    for file_report in report.files:
        if not args.quiet or not file_report.ok:
            print(file_report.describe())
    print(report.summary())
    if report.failed or report.partial:
        print("Files marked FAILED or PARTIAL were not (fully) converted; the reason is on each line.")
        return 1
    return 0
