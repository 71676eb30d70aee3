"""``promptvcr report CASSETTES... --html FILE``: the conversations cassettes hold, as one HTML page.

For cassettes as they are, outside a run: each file is one entry, each interaction shown as
recorded. ``pytest --promptvcr-html=FILE`` writes the same page for a run, with what each
request met (replayed, recorded, missed) and what verify found drifted. See docs/report.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import _output


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        type=Path,
        nargs="+",
        metavar="CASSETTE",
        help="cassette files, or folders to search for them",
    )
    parser.add_argument("--html", type=Path, required=True, metavar="FILE", help="the HTML file to write")
    parser.add_argument("--title", default="promptvcr report", help="the page's title")


def run(args: argparse.Namespace) -> int:
    out = _output.console()
    missing = [str(path) for path in args.paths if not path.exists()]
    if missing:
        out.print(f"promptvcr report: no such file or folder: {', '.join(missing)}. Nothing was written.")
        return 1
    try:
        from ...htmlreport import collect, render
        from ...htmlreport.model import Report
        from ...htmlreport.pricing import Prices
    except ImportError as error:
        out.print(f"promptvcr report: {error}", markup=False)
        return 1
    prices = Prices()
    entries, problems = collect.entries_of_files(args.paths, prices)
    for problem in problems:
        out.print(f"skipped: {' '.join(problem.split())}", markup=False)
    if not entries:
        out.print(
            f"promptvcr report: no cassette found in {', '.join(map(str, args.paths))}. Nothing was written."
        )
        return 1
    report = Report(args.title, entries, prices.available, of_run=False)
    try:
        render.write(args.html, report)
    except ImportError as error:
        out.print(f"promptvcr report: {error}", markup=False)
        return 1
    count = f"{len(entries)} cassette(s), {report.exchange_count} interaction(s)"
    out.print(f"promptvcr report: {count} -> {args.html}", markup=False)
    return 1 if problems else 0
