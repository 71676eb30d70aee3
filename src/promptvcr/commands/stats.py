"""``promptvcr stats [DIR]``: recorded requests and tokens per provider and model.

The tokens are what the recordings cost once and what every replaying run does not spend.
"""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from rich.table import Table

from ..cassettes.tokens import Tokens
from ..inventory import CassetteSummary, find_cassettes
from . import _output

HELP = "tokens and requests per provider and model across cassettes"


@dataclass
class _Row:
    requests: int = 0
    streamed: int = 0
    tokens: Tokens = field(default_factory=Tokens)
    cassettes: set[Path] = field(default_factory=set)


def table(root: Path) -> tuple[Table, int]:
    """The figures per (provider, model) under ``root``, and how many cassettes they come from."""
    rows: dict[tuple[str, str], _Row] = {}
    cassettes = 0
    for path, found in find_cassettes(root):
        if not isinstance(found, CassetteSummary):
            continue
        cassettes += 1
        for interaction in found.interactions:
            row = rows.setdefault((interaction.provider, interaction.model or "-"), _Row())
            row.requests += 1
            row.streamed += interaction.streamed
            row.tokens += interaction.tokens
            row.cassettes.add(path)
    result = Table(box=None, pad_edge=False, header_style="bold", show_footer=len(rows) > 1)
    totals: Counter[str] = Counter()
    for row in rows.values():
        totals.update(
            requests=row.requests, streamed=row.streamed, input=row.tokens.input, output=row.tokens.output
        )
    columns = (
        ("provider", "total"),
        ("model", ""),
        ("cassettes", f"{cassettes:,}"),
        ("requests", f"{totals['requests']:,}"),
        ("streamed", f"{totals['streamed']:,}"),
        ("tokens in", f"{totals['input']:,}"),
        ("tokens out", f"{totals['output']:,}"),
    )
    for name, footer in columns:
        if name in ("provider", "model"):
            result.add_column(name, footer=footer, overflow="fold")  # never cut a model name short
        else:
            result.add_column(name, footer=footer, justify="right", no_wrap=True)
    for (provider, model), row in sorted(rows.items()):
        result.add_row(
            provider,
            model,
            f"{len(row.cassettes):,}",
            f"{row.requests:,}",
            f"{row.streamed:,}",
            f"{row.tokens.input:,}",
            f"{row.tokens.output:,}",
        )
    return result, cassettes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", nargs="?", type=Path, default=Path("."), help="folder to read (default: .)")


def run(args: argparse.Namespace) -> int:
    out = _output.console()
    if not args.dir.exists():
        out.print(f"promptvcr stats: {args.dir} does not exist.")
        return 1
    result, cassettes = table(args.dir)
    if not cassettes:
        out.print(f"No promptvcr cassettes under {args.dir}.")
        return 0
    out.print(result)
    return 0
