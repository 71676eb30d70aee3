"""What body matching would change for a test that matches like vcrpy (``match_on`` without the body).

The summary of an unmigrated suite names the tests whose cassettes are stale: on a real suite
(opentelemetry-instrumentation-openai) counting misses alone found 4 of the 10 tests whose
outcome changed once bodies were compared; the other 6 were served another recording (vcrpy
served the first of a URL, an older body recorded first). Both count here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..matching.key import request_key
from ..matching.rules import default_rules
from ..matching.tape import Tape

if TYPE_CHECKING:
    from ..cassette import Cassette

__all__ = ["change_with_bodies"]


def change_with_bodies(active: Cassette) -> str | None:
    """How this test's replay would change if keys compared bodies: ``"miss"`` when a request
    would find no recording, ``"other"`` when one would be served another interaction than it
    was (vcrpy served the first recording of the URL, an older body; bodies pick the one that
    matches), ``None`` when every request would get what it got.

    Both matchings are played again on fresh tapes, in the order the requests came, so a
    request sent twice is followed through both of its recordings as replay does."""
    replayed = [play.request for play in active.played if play.outcome == "replayed"]
    if not replayed:
        return None
    repeats = active.allow_playback_repeats
    served, with_bodies = (
        Tape(list(active.interactions), active.rules),
        Tape(list(active.interactions), default_rules()),
    )
    change = None
    for request in replayed:
        was = served.play(request_key(request, served.rules), allow_repeats=repeats)
        now = with_bodies.play(request_key(request, with_bodies.rules), allow_repeats=repeats)
        if now is None:
            return "miss"
        if now is not was:
            change = "other"
    return change
