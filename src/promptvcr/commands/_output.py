"""Terminal output shared by the commands: one rich console, and numbers people read at a glance.

Lines are not wrapped by rich (the terminal wraps them, and a path or a miss message copied
from a log stays whole); tables follow ``COLUMNS`` and ``NO_COLOR`` like any rich program, so a test (or a CI
log) gets plain text at a fixed width by setting them.
"""

from __future__ import annotations

from rich.console import Console

from ..cassettes.tokens import Tokens

__all__ = ["age", "console", "size", "tokens"]


def console() -> Console:
    return Console(highlight=False, soft_wrap=True)


def tokens(counted: Tokens, unknown: int = 0) -> str:
    """``tokens 12 in, 5 out``; ``tokens unknown`` when no answer recorded its usage (a stream
    without ``include_usage``), and how many answers are not counted when some did not."""
    if counted.total == 0 and unknown:
        return "tokens unknown (no usage recorded)"
    text = f"tokens {counted.input:,} in, {counted.output:,} out"
    return f"{text} (+{unknown} without usage)" if unknown else text


def size(count: int) -> str:
    """``812 B``, ``3.6 KiB``, ``1.2 MiB``."""
    if count < 1024:
        return f"{count} B"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KiB"
    return f"{count / (1024 * 1024):.1f} MiB"


def age(seconds: float) -> str:
    """``5m``, ``3h``, ``12d``: how long ago, at the precision a person cares about."""
    seconds = max(0.0, seconds)
    for limit, unit in ((3600, 60), (86400, 3600)):
        if seconds < limit:
            return f"{int(seconds // unit)}{'m' if unit == 60 else 'h'}"
    return f"{int(seconds // 86400)}d"
