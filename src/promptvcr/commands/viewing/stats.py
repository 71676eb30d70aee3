"""``promptvcr stats [DIR]``: recorded requests and tokens per provider and model.

The tokens are what the recordings cost once and what every replaying run does not spend.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

from rich.table import Table
from rich.text import Text

from ...cassettes.tokens import Tokens
from ...readouts.inventory import CassetteSummary, find_cassettes
from .. import _output


@dataclass
class _Row:
    requests: int = 0
    streamed: int = 0
    tokens: Tokens = field(default_factory=Tokens)
    cassettes: set[Path] = field(default_factory=set)


def _add(left: _Row, right: _Row) -> _Row:
    return _Row(
        left.requests + right.requests,
        left.streamed + right.streamed,
        left.tokens + right.tokens,
        left.cassettes | right.cassettes,
    )


def _figures(row: _Row) -> list[str]:
    counts = (len(row.cassettes), row.requests, row.streamed)
    if row.requests and row.tokens.total == 0:  # no answer recorded its usage: unknown, not zero
        return [*(f"{count:,}" for count in counts), "unknown", "unknown"]
    return [f"{count:,}" for count in (*counts, row.tokens.input, row.tokens.output)]


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
    result = Table(box=None, pad_edge=False, header_style="bold", show_footer=True)
    result.add_column("provider / model", footer="total", overflow="fold")  # never cut a model name short
    for name in ("cassettes", "requests", "streamed", "tokens in", "tokens out"):
        result.add_column(name, justify="right", no_wrap=True)
    total = _Row()
    for provider in sorted({provider for provider, _ in rows}):
        models = sorted((model, row) for (p, model), row in rows.items() if p == provider)
        subtotal = _Row()
        for _, row in models:
            subtotal = _add(subtotal, row)
        total = _add(total, subtotal)
        result.add_row(Text(provider, style="bold"), *_figures(subtotal), style="bold")
        for model, row in models:
            result.add_row(f"  {model}", *_figures(row))
    for column, footer in zip(result.columns[1:], _figures(total), strict=True):
        column.footer = footer
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
