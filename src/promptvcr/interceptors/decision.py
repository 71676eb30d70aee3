"""The one interface between an HTTP library's patch and promptvcr's core: a decision.

An interceptor converts its library's request into a :class:`Request` and asks the
:class:`Handler` what to do. The answer is one of three small values, matched by type:

- :class:`Replay`: serve the stored response, never touching the network;
- :class:`Record`: send the request and hand the complete response to its recorder;
- :data:`PASS_THROUGH`: send it and keep nothing.

A miss raises :class:`~promptvcr.CassetteMiss` instead of returning.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:  # annotations only: the pytest plugin imports activation, which imports this, at start
    from ..cassettes.models import Request, Response
    from ..errors import CassetteMiss

__all__ = [
    "PASS_THROUGH",
    "Decision",
    "Handler",
    "MissSink",
    "PassThrough",
    "Record",
    "Recorder",
    "Replay",
    "Uninstall",
    "noted_miss",
]


class Recorder(Protocol):
    """Takes the complete response of a request that went to the network, once.

    ``started(abandon)`` says the headers arrived and the body is on its way, so that a response
    the application then neither reads to the end nor closes is not silently dropped when the
    cassette exits: ``abandon`` records it as far as it arrived (``end: closed``); without one it
    is reported. An interceptor that always reads bodies to the end may skip it.
    """

    def __call__(self, response: Response) -> None: ...

    def started(self, abandon: Callable[[], None] | None = None) -> None: ...

    # ``lost(error)``, when a recorder has it: the response could not be kept while it arrived
    # (its spool could not be written, see :mod:`.recording`); the cassette's error, not a cut.


class Replay(NamedTuple):
    """Serve ``response``; when its ``playback`` is set, pace and break it as it says.

    A websocket session (``response.websocket``) comes with the cassette that serves it as
    ``misses``: a client frame that is not the recorded one is a miss noted there, like any.
    A named tuple: one is made per replayed request, in a third of a frozen dataclass's time.
    """

    response: Response
    misses: MissSink | None = None


class MissSink(Protocol):
    """Where the miss of a websocket frame is noted: the cassette (see :class:`Replay`)."""

    path: Path
    missed: list[Request]

    def note_miss(self, request: Request, error: CassetteMiss) -> None: ...


def noted_miss(misses: MissSink | None, request: Request, message: Callable[[Path], str]) -> CassetteMiss:
    """The miss of a session's frame (websocket or stdio), noted in ``misses`` when a cassette
    serves the session: ``message(path)`` says it for that cassette's file."""
    from ..errors import CassetteMiss  # at call time: see the imports above

    if misses is None:
        return CassetteMiss(message(Path("<cassette>")))
    error = CassetteMiss(message(misses.path), cassette=misses.path)
    misses.missed.append(request)
    misses.note_miss(request, error)
    return error


@dataclass(frozen=True, slots=True)
class Record:
    """Send the request to the network and give ``recorder`` the response as it arrives."""

    recorder: Recorder


@dataclass(frozen=True, slots=True)
class PassThrough:
    """Send the request to the network and keep nothing."""


#: The one :class:`PassThrough` value.
PASS_THROUGH = PassThrough()

Decision = Replay | Record | PassThrough

#: Undoes an interceptor's patches.
Uninstall = Callable[[], None]


class Handler(Protocol):
    def handle(self, request: Request) -> Decision:
        """What to do with ``request``; raises :class:`~promptvcr.CassetteMiss` on a miss."""
        ...
