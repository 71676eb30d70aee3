"""``on_tool_drift``: what a replay does when only tool results differ from the recording.

An agent test replays the model while its tools run for real; when a tool (a database, a
search, the clock) returns something new, the next model request differs from its recording
in that tool result only. By default that is a miss, as any difference is: the recorded
answer was given to other tool output. ``"replay"`` serves it anyway, and the play is marked
``tool-drift`` with what changed, for the summary, the drift report and ``--fail-on-drift``.
A changed prompt, tool definition or parameter is never tool drift (see
:mod:`promptvcr.matching.whymissed`).

``$PROMPTVCR_ON_TOOL_DRIFT`` is how pytest's ``--on-tool-drift`` and ``promptvcr serve
--on-tool-drift`` reach every cassette of a run; ``on_tool_drift=`` written in code wins.
"""

from __future__ import annotations

import os
from typing import Literal

__all__ = ["ENV_ON_TOOL_DRIFT", "TOOL_DRIFT_CHOICES", "OnToolDrift", "resolve_on_tool_drift"]

ENV_ON_TOOL_DRIFT = "PROMPTVCR_ON_TOOL_DRIFT"
OnToolDrift = Literal["miss", "replay"]
TOOL_DRIFT_CHOICES: tuple[OnToolDrift, ...] = ("miss", "replay")


def resolve_on_tool_drift(given: str | None) -> OnToolDrift:
    """``given``, else ``$PROMPTVCR_ON_TOOL_DRIFT``, else ``"miss"``; a clear error for anything else."""
    where = "on_tool_drift"
    if given is None:
        given, where = os.environ.get(ENV_ON_TOOL_DRIFT) or "miss", f"${ENV_ON_TOOL_DRIFT}"
    if given == "miss":
        return "miss"
    if given == "replay":
        return "replay"
    raise ValueError(
        f'{where}={given!r} is not a choice: give "miss" (the default: a changed tool result misses) '
        f'or "replay" (serve the recorded answer and report the tool drift).'
    )
