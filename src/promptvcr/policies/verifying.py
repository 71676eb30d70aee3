"""``RecordMode.verify``: each recorded request is sent live, and the answer's structure compared.

The live answer reaches the code under test; the cassette file is never written. What
changed between the recording and the live answer (see :mod:`.shapes`) is kept as one
:class:`Drift` per interaction on ``Cassette.drift``, shown in the pytest summary and in
``--drift-report``, and warned about as the cassette exits (:class:`DriftWarning`). A
request with no recording is sent live too (verify never fails a run for a miss: it is a
check of the provider, not of the code) and reported as "not recorded".
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..cassettes.models import Interaction, Request, Response
from ..credentials.byname import redact_url
from .modes import rerecord_text

__all__ = [
    "NOT_RECORDED",
    "Drift",
    "DriftWarning",
    "Verifier",
    "drift_of",
    "drift_warning",
    "not_recorded",
    "warn_drift",
]

NOT_RECORDED = "not recorded: no interaction of the cassette matches it; it went to the network, unchecked"
_SHOWN = 5


class DriftWarning(UserWarning):
    """A live answer's structure differs from its recording (``RecordMode.verify``)."""


@dataclass(frozen=True)
class Drift:
    """How one live answer differs from its recording: one human line per difference."""

    cassette: str
    method: str
    url: str
    differences: tuple[str, ...]
    #: The interaction's position in the cassette; ``None`` for a request with no recording.
    position: int | None = None

    @property
    def where(self) -> str:
        at = "" if self.position is None else f"interactions[{self.position}] "
        return f"{at}{self.method} {self.url}"

    def to_data(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Drift:
        return cls(**{**data, "differences": tuple(data["differences"])})


def drift_of(path: Path, interaction: Interaction, live: Response, position: int | None) -> Drift | None:
    """The drift of ``live`` from ``interaction``'s recorded response; ``None`` when none.
    The shapes are imported here, in verify mode: replaying never compares them."""
    from .shapes import differences, shape_of

    request = interaction.request
    found = differences(shape_of(interaction.response, request), shape_of(live, request))
    if not found:
        return None
    return Drift(str(path), request.method, redact_url(request.url), tuple(found), position)


def not_recorded(path: Path, request: Request) -> Drift:
    return Drift(str(path), request.method, redact_url(request.url), (NOT_RECORDED,))


def drift_warning(path: Path, drifts: Sequence[Drift]) -> str:
    lines = [f"promptvcr verify: {len(drifts)} answer(s) of {path} differ from the recording:"]
    for drift in drifts[:_SHOWN]:
        lines.append(f"  {drift.where}")
        lines.extend(f"    {line}" for line in drift.differences)
    if len(drifts) > _SHOWN:
        lines.append(f"  and {len(drifts) - _SHOWN} more (Cassette.drift lists them all)")
    lines.append(f"Re-record it to replay what the provider sends now: {rerecord_text('rewrite', '')}.")
    return "\n".join(lines)


def warn_drift(path: Path, drifts: Sequence[Drift]) -> None:
    """A :class:`DriftWarning` as a verified cassette exits, when an answer drifted."""
    if drifts:
        warnings.warn(DriftWarning(drift_warning(path, drifts)), stacklevel=3)


class Verifier:
    """The :class:`~promptvcr.interceptors.decision.Recorder` of a verified request: it hands
    the live answer to ``compare`` instead of storing it."""

    __slots__ = ("_compare", "_interaction", "_request")

    def __init__(
        self,
        compare: Callable[[Request, Interaction, Response], None],
        request: Request,
        interaction: Interaction,
    ) -> None:
        self._compare, self._request, self._interaction = compare, request, interaction

    def started(self, abandon: Callable[[], None] | None = None) -> None:
        """Nothing to track: an answer the code never finishes reading is simply not compared."""

    def __call__(self, response: Response) -> None:
        self._compare(self._request, self._interaction, response)
