"""``promptvcr ls [DIR]``: the cassettes under a folder, to see what piles up and what it cost.

Two lines per cassette (its path, then its figures) rather than a table: cassette paths are
long, and a table squeezed into a terminal folds them beyond reading.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.text import Text

from ...cassettes.tokens import Tokens
from ...readouts.inventory import CassetteSummary, find_cassettes
from .. import _output


def _shown(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if root.is_dir() else str(path)


def _figures(summary: CassetteSummary, now: float) -> str:
    count = len(summary.interactions)
    streamed = {"yes": "streamed", "no": "not streamed", "mixed": "some streamed"}[summary.streamed]
    tokens = summary.tokens
    parts = [
        f"{count} interaction{'' if count == 1 else 's'}",
        ", ".join(summary.providers) or "-",
        ", ".join(summary.models) or "-",
        streamed,
        _output.size(summary.size),
        f"{_output.age(now - summary.modified)} old",
        _output.tokens(tokens, summary.unknown_tokens),
    ]
    return "  " + " | ".join(parts)


def listing(root: Path, now: float) -> tuple[list[Text], list[str]]:
    """The lines listing ``root``, and the files under it that are not promptvcr cassettes."""
    lines: list[Text] = []
    skipped: list[str] = []
    count = 0
    total = Tokens()
    unknown = 0
    size = 0
    for path, found in find_cassettes(root):
        if not isinstance(found, CassetteSummary):
            skipped.append(f"{_shown(path, root)}: {' '.join(str(found).split())}")
            continue
        count += 1
        total += found.tokens
        unknown += found.unknown_tokens
        size += found.size
        lines.append(Text(_shown(path, root), style="bold"))
        lines.append(Text(_figures(found, now)))
    if count:
        lines.append(
            Text(
                f"{count} cassette{'' if count == 1 else 's'}, {_output.size(size)}, "
                f"{_output.tokens(total, unknown)}"
            )
        )
    return lines, skipped


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", nargs="?", type=Path, default=Path("."), help="folder to list (default: .)")
    parser.add_argument(
        "--show-skipped", action="store_true", help="also list the files that are not cassettes"
    )


def run(args: argparse.Namespace) -> int:
    root: Path = args.dir
    out = _output.console()
    if not root.exists():
        out.print(f"promptvcr ls: {root} does not exist.")
        return 1
    lines, skipped = listing(root, time.time())
    for line in lines:
        out.print(line)
    if not lines:
        out.print(f"No promptvcr cassettes under {root}.")
    if skipped:
        how = ":" if args.show_skipped else " (--show-skipped lists them)."
        out.print(f"{len(skipped)} file(s) skipped, not promptvcr cassettes{how}")
        if args.show_skipped:
            for reason in skipped:
                out.print(f"  {reason}", markup=False)
    return 0
