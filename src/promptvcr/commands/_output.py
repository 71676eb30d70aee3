"""Terminal output shared by the commands: one rich console, and numbers people read at a glance.

Lines are not wrapped by rich (the terminal wraps them, and a path or a miss message copied
from a log stays whole); tables follow ``COLUMNS`` and ``NO_COLOR`` like any rich program, so a test (or a CI
log) gets plain text at a fixed width by setting them.
"""

from __future__ import annotations

from rich.console import Console

__all__ = ["age", "console", "size"]


def console() -> Console:
    return Console(highlight=False, soft_wrap=True)


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
