"""MCP over stdio: the session of a server process, recorded and replayed line by line.

An MCP client starts the server as a process (``npx some-server``, ``uvx some-server``,
``python server.py``) and the two write newline-delimited JSON-RPC messages to each other
over its stdin and stdout. A session is one interaction: the request names the server
(:func:`stdio_request`, keyed like any request), the response holds every line both sides
wrote, in order and timed, stored under ``stdio`` as websocket frames are
(:mod:`promptvcr.cassettes.wsframes`): a JSON line parsed, ``close`` the end of a side's
stream (the server's with its exit status).

- record: a :class:`LineTap` sees each line as it passes, holding nothing back, and hands
  the session to the recorder once the server's output has ended;
- replay: a :class:`LinePlayer` answers each line the client writes with the server lines
  it caused while recording; no process is started. Client lines are matched as parsed
  JSON without their JSON-RPC ids (:mod:`promptvcr.matching.framediff`), in any order:
  concurrent calls (``asyncio.gather`` of ``call_tool``) are written in whatever order
  their tasks run. The answers take the live ids (:mod:`promptvcr.matching.jsonrpc`) and
  keep their recorded order. A read asked again (``tools/list``) gets the answer to its last
  asking again; any other line that is none of the recorded ones not yet played raises
  :class:`~promptvcr.CassetteMiss`.

Both serve the ``mcp`` SDK's ``stdio_client`` in-process (:mod:`.mcp_stdio`) and the
``promptvcr mcp -- <server command>`` wrapper that clients in other languages start instead
of the server (:mod:`promptvcr.commands.bridges.mcp_wrap`).
"""

from __future__ import annotations

import bisect
import math
import os
import re
import shlex
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from ..cassettes.models import Request, Response
from ..cassettes.sessions import STALL  # no client line for this long: what is due goes past a held one
from ..cassettes.wsframes import Frame, Sender, WebSocketSession, frame_json, with_session
from ..errors import CassetteMiss
from ..matching.framediff import frame_differences, frame_miss_message
from ..matching.jsonrpc import Renumbering, answers, handles, reads_again, text_renumbered
from .decision import MissSink, Recorder, noted_miss

__all__ = ["STALL", "Line", "LinePlayer", "LineTap", "stdio_request"]

#: ``python3.12`` and ``python`` are the same program on two machines.
_VERSIONED_PYTHON = re.compile(r"(python)[0-9.]*(\.exe)?", re.IGNORECASE)


def _program(arg: str) -> str:
    name = os.path.basename(arg)
    return name if (m := _VERSIONED_PYTHON.fullmatch(name)) is None else m.group(1).lower()


def stdio_request(command: str, args: Sequence[str]) -> Request:
    """The request a server process stands for: ``SPAWN stdio:<program> <args>``.

    The program is named without its folder (``/usr/bin/python3.12`` is ``python``) and an
    argument that is an absolute path by its last part: the same server started from another
    checkout, virtualenv or temporary folder is the same server. The environment is not part
    of it (it often holds the server's API keys): it is never read, never stored."""
    words = [_program(command), *(os.path.basename(a) if os.path.isabs(a) else a for a in args)]
    return Request("SPAWN", "stdio:" + shlex.join(words), {})


class Line(NamedTuple):
    """A line the replayed server writes, and when: at ``time.monotonic()`` ``due`` (0: at once;
    set under ``timing="recorded"``, the recorded gap after the client line that caused it)."""

    data: bytes
    due: float = 0.0


class LineTap:
    """The recording of one live stdio session: ``wrote`` as bytes pass, ``closed`` as a side's
    stream ends, ``finish`` once the server's output is over (the session goes to ``recorder``)."""

    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder
        self._frames: list[Frame] = []
        self._partial: dict[Sender, bytes] = {"client": b"", "server": b""}
        self._start = time.perf_counter()
        self._lock = threading.Lock()
        self._done = False
        recorder.started()

    def wrote(self, sender: Sender, data: bytes) -> None:
        with self._lock:
            *lines, self._partial[sender] = (self._partial[sender] + data).split(b"\n")
            at = time.perf_counter() - self._start
            self._frames.extend(Frame(sender, "text", line.rstrip(b"\r"), at) for line in lines)

    def closed(self, sender: Sender, code: int | None = None) -> None:
        """``sender``'s stream ended (a last line without its newline is kept as a line)."""
        with self._lock:
            if any(frame.sender == sender and frame.kind == "close" for frame in self._frames):
                return
            at = time.perf_counter() - self._start
            if rest := self._partial[sender]:
                self._frames.append(Frame(sender, "text", rest, at))
                self._partial[sender] = b""
            self._frames.append(Frame(sender, "close", b"", at, code))

    def finish(self, exit_code: int | None) -> None:
        """The server's output ended (``exit_code``: its status, when known): recorded, once."""
        self.closed("server", exit_code)
        with self._lock:
            if self._done:
                return
            self._done = True
            frames = list(self._frames)
        self._recorder(with_session(Response(200), WebSocketSession(frames, "stdio")))


def _waits(frames: Sequence[Frame]) -> list[tuple[int, ...] | None]:
    """For each server frame that answers a client request (or reports its progress), the
    client frames it waits for: that request, and what the client wrote while it was in
    flight other than requests (its answers to the server's own requests, a cancellation);
    ``None`` for any other frame, which keeps its place: it waits for every client frame
    before it."""
    asked: dict[str, int] = {}  # a request's handle -> its frame
    others: list[int] = []  # client frames that are not requests, in order
    waits: list[tuple[int, ...] | None] = []
    for index, frame in enumerate(frames):
        message = frame_json(frame)
        if frame.sender == "client":
            names = handles(message)
            asked.update(dict.fromkeys(names, index))
            if not names:
                others.append(index)
            waits.append(None)
            continue
        handle = answers(message)
        request = asked.get(handle) if handle is not None else None
        if request is None and handle is not None:  # taped before its request (see below)
            later = _asked_later(frames, index, handle)
            waits.append(None if later is None else (later,))
            continue
        waits.append(None if request is None else (request, *others[bisect.bisect(others, request) :]))
    return waits


def _asked_later(frames: Sequence[Frame], index: int, handle: str) -> int | None:
    """The client frame after ``index`` that asks ``handle``: where an answer taped before its
    request waits. Recorders before 0.40 taped a client line after passing it on, so a quick
    server's answer could be taped first; replayed in that order, the answer went out before
    the client asked and the client waited for it until its timeout."""
    return next(
        (
            later
            for later in range(index + 1, len(frames))
            if frames[later].sender == "client" and handle in handles(frame_json(frames[later]))
        ),
        None,
    )


def _awaited(frame: Frame) -> bool:
    """Whether a client may be waiting for server frame ``frame``: an answer, or a request of
    the server's own (``sampling/createMessage``...), not a notification."""
    message = frame_json(frame)
    return isinstance(message, dict) and ("method" not in message or "id" in message)


class LinePlayer:
    """Plays a recorded stdio session to a client; thread-safe, no I/O of its own.

    Each line the client writes is matched by content (ids aside) with the earliest recorded
    client line not yet played, in whatever order concurrent requests come. The server's
    lines keep their recorded order, each sent once what it waits for came: an answer (or
    progress) its request, any other line every client line recorded before it. The client
    then sees what it saw live, and acts as it did live (the ``mcp`` SDK lists the tools when
    a call's first answer comes: it does so once, as recorded). A client that no longer
    writes what a held line waits for gets the lines that are due anyway when it
    :meth:`stalled` (or closed)."""

    def __init__(self, request: Request, response: Response, misses: MissSink | None) -> None:
        self.request = request
        self._frames = frames = (response.websocket or WebSocketSession()).frames
        self._misses = misses
        self._waits = _waits(frames)
        #: Frames done with: a server frame sent, a client frame played (or passed over at the
        #: client's close); the first client frame not done, and the first server frame not sent.
        self._done = [False] * len(frames)
        self._played: set[int] = set()  # client frames matched by a line the client wrote
        self._loose: set[int] = set()  # server frames that no longer hold back those after them
        self._passed: list[int] = []  # client frames passed over at a stall, not yet played
        self._first_open = self._first_unsent = 0
        self._advance()
        self._renumbering = Renumbering()
        self._lock = threading.Lock()
        # timing="recorded": each frame's time; a server line is due as long after the client
        # line that released it (``self._clock``: when it came, and its recorded time) as it was.
        playback = response.playback
        times = playback.chunk_times if playback is not None else None
        self._times = times if times is not None and len(times) >= len(frames) else None
        self._clock = (time.monotonic(), 0.0)
        #: The server's exit status once the recording says its output ended.
        self.exit_code: int | None = None
        self.ended = False

    def opening(self) -> list[Line]:
        """What the server wrote before the client's first line (most write nothing)."""
        with self._lock:
            return self._server_lines()

    def client_wrote(self, line: bytes) -> list[Line]:
        """The server's lines now due (each ending in a newline); raises :class:`CassetteMiss`
        when ``line`` is none of the recorded client lines not yet played."""
        sent = Frame("client", "text", line.rstrip(b"\r\n"))
        with self._lock:
            if self.ended:  # the server had exited: the line goes nowhere, as it did live
                return []
            index = next(
                (i for i in self._open_lines() if not frame_differences(self._frames[i], sent)), None
            )
            if index is None and (again := self._read_again(sent)) is not None:
                return again
            if index is None:
                raise self._miss(len(self._played), self._nearest(sent), sent)
            self._renumbering.learn(frame_json(self._frames[index]), frame_json(sent))
            if self._passed and index in self._passed:
                self._passed.remove(index)
            self._played.add(index)
            self._done[index] = True
            self._advance()
            self._came(index)
            return self._server_lines()

    def _read_again(self, sent: Frame) -> list[Line] | None:
        """A read (``tools/list``: :func:`~promptvcr.matching.jsonrpc.reads_again`) asked more
        times than recorded: the answer to its last recorded asking, with the live id, at once
        (a live server answers it again the same way); ``None`` for anything else."""
        if not reads_again(sent.data):
            return None
        frames = self._frames
        asked = max((i for i in self._played if not frame_differences(frames[i], sent)), default=None)
        answer = next(
            (i for i, w in enumerate(self._waits) if w is not None and w[0] == asked and _awaited(frames[i])),
            None,
        )
        if asked is None or answer is None:
            return None
        change = Renumbering()
        change.learn(frame_json(frames[asked]), frame_json(sent))
        data = frames[answer].data
        text = text_renumbered(data.decode("utf-8", "replace"), change) if change else None
        return [Line((data if text is None else text.encode()) + b"\n", 0.0)]

    def stalled(self) -> list[Line]:
        """The client wrote nothing for :data:`STALL` seconds while a request it sent is not
        answered: the next answer (or server request) that can be sent, past lines that wait
        for what the client no longer writes (a call dropped, or now awaited before the
        others). The client lines recorded before it that did not come are passed over (still
        played if they come later); the lines held for them no longer hold anything back. A
        client that waits for no answer is only idle: nothing."""
        with self._lock:
            if self.ended:
                return []
            frames, waits = self._frames, self._waits
            held = [
                i
                for i in range(self._first_unsent, len(frames))
                if frames[i].sender == "server" and not self._done[i]
            ]
            if not any((w := waits[i]) is not None and w[0] in self._played for i in held):
                return []
            target = next(
                (
                    i
                    for i in held
                    if _awaited(frames[i]) and ((w := waits[i]) is None or w[0] in self._played)
                ),
                None,
            )
            if target is None:
                return []
            for index in range(self._first_open, target):
                if (
                    frames[index].sender == "client"
                    and frames[index].kind != "close"
                    and not self._done[index]
                ):
                    self._done[index] = True
                    self._passed.append(index)
            self._advance()
            self._loose.update(i for i in held if i < target and not self._due(i))
            self._clock = (time.monotonic(), math.inf)  # what comes late is not paced as well
            return self._server_lines(until=target)

    def client_closed(self) -> list[Line]:
        """The client closed the server's stdin: what the server still wrote; its exit follows.
        Lines the client did not write this time are passed over, and the answers to them
        never sent."""
        with self._lock:
            close = next(
                (i for i, f in enumerate(self._frames) if f.sender == "client" and f.kind == "close"),
                len(self._frames) - 1,
            )
            for index in range(self._first_open, close + 1):
                self._done[index] = self._done[index] or self._frames[index].sender == "client"
            self._advance()
            self._came(close)
            self._loose.update(range(len(self._frames)))
            lines = self._server_lines()
            self.ended = True
            return lines

    def _open_lines(self) -> Iterator[int]:
        """The recorded client lines not yet played, in order."""
        yield from self._passed
        frames, done = self._frames, self._done
        for index in range(self._first_open, len(frames)):
            if not done[index] and frames[index].sender == "client" and frames[index].kind != "close":
                yield index

    def _advance(self) -> None:
        frames, done = self._frames, self._done
        while self._first_open < len(frames) and (
            frames[self._first_open].sender == "server" or done[self._first_open]
        ):
            self._first_open += 1

    def _due(self, index: int) -> bool:
        waits = self._waits[index]
        if waits is None:
            return self._first_open > index
        request, *others = waits
        return request in self._played and all(self._done[i] for i in others)

    def _nearest(self, sent: Frame) -> Frame | None:
        """The recorded line not yet played that ``sent`` differs least from (the earliest of equals)."""
        lines = list(self._open_lines())
        if not lines:
            return None
        return self._frames[min(lines, key=lambda i: len(frame_differences(self._frames[i], sent)))]

    def _came(self, index: int) -> None:
        """Client frame ``index`` came now: the pacing's new reference."""
        if self._times is not None:
            self._clock = (time.monotonic(), self._times[index])

    def _server_lines(self, until: int | None = None) -> list[Line]:
        """The server lines due, in recorded order, each sent once, up to the first that is not
        due and not loose (or up to ``until``); a close ends the output."""
        frames, done = self._frames, self._done
        lines: list[Line] = []
        for index in range(self._first_unsent, len(frames) if until is None else until + 1):
            frame = frames[index]
            if frame.sender == "client" or done[index]:
                continue
            if not self._due(index):
                if index in self._loose:
                    continue
                break
            done[index] = True
            if frame.kind == "close":
                self.ended, self.exit_code = True, frame.code
                break
            data = frame.data
            if self._renumbering:
                text = text_renumbered(data.decode("utf-8", "replace"), self._renumbering)
                data = data if text is None else text.encode()
            due = 0.0
            if self._times is not None:
                came, recorded = self._clock
                due = max(came + self._times[index] - recorded, came)
            lines.append(Line(data + b"\n", due))
        while self._first_unsent < len(frames) and (
            frames[self._first_unsent].sender == "client" or done[self._first_unsent]
        ):
            self._first_unsent += 1
        return lines

    def _miss(self, count: int, recorded: Frame | None, sent: Frame) -> CassetteMiss:
        def message(path: Path) -> str:
            return frame_miss_message(
                path, self.request.url, count, recorded, sent, transport="MCP stdio", any_order=True
            )

        return noted_miss(self._misses, self.request, message)
