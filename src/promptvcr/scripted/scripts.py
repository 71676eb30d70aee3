"""``promptvcr.script(*replies)``: answers nobody recorded, served in order, like a cassette.

A :class:`Script` is used the way :func:`~promptvcr.use_cassette` is (``with``, ``async
with``, a decorator) or given to one as ``use_cassette(path, script=...)`` (and so as the
pytest marker's ``script=`` argument). Entered on its own it is a cassette that holds no
file, always replays, and answers each request with its next reply.

**With a cassette file, the recording answers first; the script answers what the file does
not hold.** A recorded answer is what the provider really said, so it wins wherever there is
one, and the script fills the gaps that were never recorded (the refusal, the odd tool call,
the second tool round), in the order they are asked. A script consulted first would take
the first requests whatever the file holds, so adding one reply would shift every recorded
answer after it. Scripted answers are never written to the file; in ``record`` and
``rewrite`` modes a request that neither the file nor the script answers goes to the network.

A request for an endpoint scripted replies do not render (an embedding, a model list) does
not use up a reply. Once every reply is used, the next request is a
:class:`~promptvcr.CassetteMiss` that says the script ran out.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from .. import activation
from ..cassette import Cassette
from ..cassettes.models import Play, Request, Response
from ..cassettes.playback import Pace, pace_factor, paced
from ..faults.plan import FaultFired, break_answer
from ..faults.spec import Fault
from .endpoints import ENDPOINTS, endpoint_of
from .rendering import Turn
from .replies import Reply

__all__ = ["SCRIPT_PATH", "Script", "script"]

#: The path a script entered on its own reports: no file is read or written there.
SCRIPT_PATH = Path("<promptvcr script>")


class _Use:
    """How far one use of a cassette has got through the script."""

    __slots__ = ("next", "played")

    def __init__(self, played: list[Play]) -> None:
        self.played, self.next = played, 0


class Script(activation.Block):
    """Replies served in order to the requests no recording answers. Build it with :func:`script`.

    ``async with`` and the decorator come from :class:`~promptvcr.activation.Block`: each call
    of a decorated function runs with a fresh use of the script, from its first reply."""

    def __init__(
        self, replies: Sequence[Reply], *, timing: Pace = "none", faults: Sequence[Fault] = ()
    ) -> None:
        for item in replies:
            if not isinstance(item, Reply):
                raise TypeError(f"a script holds replies made with promptvcr.reply(...), not {item!r}")
        self.replies = tuple(replies)
        self.timing = timing
        self.faults = tuple(faults)
        pace_factor(timing)  # a bad pace fails here rather than at the first request
        #: Ids depend on this: the same script gives the same ids on every run.
        self.seed = hashlib.sha256(repr(self.replies).encode()).hexdigest()[:16]
        self._uses: weakref.WeakKeyDictionary[Any, _Use] = weakref.WeakKeyDictionary()
        self._own: weakref.WeakSet[Any] = weakref.WeakSet()
        self._entered: list[Cassette] = []

    def __repr__(self) -> str:
        return f"<Script of {len(self.replies)} replies>"

    def __len__(self) -> int:
        return len(self.replies)

    # Serving a request (called by the cassette, under its lock) ------------------------------

    def _use(self, cassette: Any) -> _Use:
        use = self._uses.get(cassette)
        if use is None or use.played is not cassette.played:  # a new use of the cassette starts over
            use = self._uses[cassette] = _Use(cassette.played)
        return use

    def used(self, cassette: Any) -> int:
        """How many replies this use of ``cassette`` has served."""
        return self._use(cassette).next

    def answer(self, request: Request, cassette: Any, fired: FaultFired | None = None) -> Response | None:
        """The next reply rendered for ``request``, noted in ``cassette.played``; ``None`` when
        the request is not for an endpoint replies render for, or the script ran out."""
        endpoint = endpoint_of(request)
        use = self._use(cassette)
        if endpoint is None or use.next >= len(self.replies):
            return None
        position, use.next = use.next, use.next + 1
        reply = self.replies[position]
        usage = reply.usage_for(request.content)
        model = reply.model or endpoint.model or "scripted"
        turn = Turn(reply, model, endpoint.stream, position, self.seed, usage, endpoint.body)
        response = endpoint.render(turn)
        pace = pace_factor(cassette.timing) or 1.0  # delays a reply asks for are served by default
        if fired is not None and fired.fault.breaks_recorded_answer:
            broken = break_answer(fired.fault, response, pace)
            if broken is not None:
                cassette.faults_fired.append(fired)
                cassette.played.append(Play(request, "fault", broken))
                return broken
        cassette.played.append(Play(request, "replayed", response))
        return paced(response, pace)

    def ran_out(self, request: Request, message: str, cassette: Any) -> str:
        """The message of the miss of a request the script did not answer (``message`` is the
        cassette's own, kept when a cassette file was consulted first)."""
        where = f"{request.method} {request.url}"
        if endpoint_of(request) is None:
            text = f"promptvcr: no scripted reply for {where}: scripted replies render only for {ENDPOINTS}."
        else:
            count = len(self.replies)
            text = (
                f"promptvcr: the script ran out: its {count} repl{'y was' if count == 1 else 'ies were'} "
                f"all used, and {where} asked for reply {count + 1}. Add a reply to the script "
                f"(promptvcr.script(..., promptvcr.reply(...)))."
            )
        if cassette in self._own:
            return text
        return f"{text}\nThe cassette {cassette.path} has no answer for it either:\n{message}"

    # Used on its own, like a cassette --------------------------------------------------------

    def cassette(self) -> Cassette:
        """A fresh cassette that holds no file and answers from this script only, in replay mode."""
        cassette = Cassette(
            SCRIPT_PATH, record_mode="replay", timing=self.timing, faults=self.faults, script=self
        )
        self._own.add(cassette)
        return cassette

    def __enter__(self) -> Cassette:
        cassette = self.cassette()
        self._entered.append(cassette)
        return cassette.__enter__()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._entered.pop().__exit__(exc_type, exc, tb)

    def _fresh(self) -> Cassette:
        return self.cassette()


def script(*replies: Reply, timing: Pace = "none", faults: Sequence[Fault] = ()) -> Script:
    """The replies, served in order to the requests no recording answers (see :mod:`.scripts`).

    ``with promptvcr.script(reply("Hi"), reply(tool_calls=[("search", {"q": "x"})])):``
    answers the next two LLM calls of the block; ``use_cassette(path, script=...)`` or the
    pytest marker's ``script=`` argument answers only what the cassette file does not hold.
    ``timing`` scales the ``delay`` and ``gap`` of the replies (``"none"`` serves them as
    given, a factor such as ``0.1`` ten times faster); ``faults`` are declared failures
    (:mod:`promptvcr.faults`): an HTTP error or a timeout takes the place of an answer and
    leaves the reply for the retry, a cut or malformed stream breaks the reply it hits.
    """
    return Script(replies, timing=timing, faults=faults)
