"""What a recording says about the machine values it replaced: each placeholder, how often, where."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .values import MachineValue

__all__ = ["MachineIdentityWarning", "replaced_message"]


class MachineIdentityWarning(UserWarning):
    """Values that identify the recording machine (its paths, user, host) were written as
    placeholders (``<home>``, ``<user>``...); replay puts the replaying machine's values back."""


def replaced_message(
    path: Path | str,
    replaced: Sequence[tuple[str, dict[str, int]]],
    values: Sequence[MachineValue] | None = None,
) -> str:
    """The warning of a recording (``replaced``: where, and how many of each placeholder);
    ``values`` given (``IdentityOptions(report=True)``): which value each placeholder stood for."""
    lines = [
        f"  {where}: " + ", ".join(f"<{name}> x{count}" for name, count in sorted(counts.items()))
        for where, counts in replaced
    ]
    if values is not None:
        used = {name for _, counts in replaced for name in counts}
        lines += [f"  <{v.name}> stands for {v.text!r}" for v in values if v.name in used]
    return (
        f"promptvcr: wrote the recording machine's identity as placeholders in {path} (replay puts "
        "back the replaying machine's own values, so the cassette replays on any machine):\n"
        + "\n".join(lines)
        + "\nTo keep the values as they are: use_cassette(..., identity=False); to replace more "
        '(an email, an org id): identity={"email": "..."}.'
    )
