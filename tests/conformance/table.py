"""The per-provider table of a conformance run, and the reasons behind every failure."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from .runner import Outcome

__all__ = ["failure_lines", "provider_table"]


def provider_table(outcomes: Sequence[Outcome]) -> str:
    rows: dict[str, Counter[str]] = defaultdict(Counter)
    for o in outcomes:
        rows[o.provider][o.status] += 1
    header = "| provider | interactions | imported | driven | replayed equal | failed | skipped (reason) |"
    lines = [header, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    total: Counter[str] = Counter()
    for provider in sorted(rows):
        c = rows[provider]
        total.update(c)
        lines.append(_row(provider, c))
    lines.append(_row("**total**", total))
    return "\n".join(lines)


def _row(name: str, c: Counter[str]) -> str:
    interactions = sum(c.values())
    imported = interactions - c["not-imported"]
    driven = c["equal"] + c["failed"]
    return (
        f"| {name} | {interactions} | {imported} | {driven} | {c['equal']} | {c['failed']} | {c['skipped']} |"
    )


def failure_lines(outcomes: Sequence[Outcome]) -> list[str]:
    lines = [
        f"{o.provider}/{o.cassette}[{o.index}] ({o.sdk}) {o.status}: {o.reason}"
        for o in outcomes
        if o.status in ("failed", "not-imported")
    ]
    skipped: Counter[str] = Counter(f"{o.provider}: {o.reason}" for o in outcomes if o.status == "skipped")
    lines.extend(f"skipped {n}x {reason}" for reason, n in sorted(skipped.items()))
    return lines
