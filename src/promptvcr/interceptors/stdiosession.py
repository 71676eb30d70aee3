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
  that followed it while recording; no process is started. Client lines are matched in
  order as parsed JSON without their JSON-RPC ids (:mod:`promptvcr.matching.framediff`),
  and the answers take the live ids (:mod:`promptvcr.matching.jsonrpc`). A line that is
  not the recorded one raises :class:`~promptvcr.CassetteMiss`.

Both serve the ``mcp`` SDK's ``stdio_client`` in-process (:mod:`.mcp_stdio`) and the
``promptvcr mcp -- <server command>`` wrapper that clients in other languages start instead
of the server (:mod:`promptvcr.commands.mcp_wrap`).
"""

from __future__ import annotations

import os
import re
import shlex
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from ..cassettes.models import Request, Response
from ..cassettes.wsframes import Frame, Sender, WebSocketSession, frame_json, with_session
from ..errors import CassetteMiss
from ..matching.framediff import frame_differences, frame_miss_message
from ..matching.jsonrpc import Renumbering, text_renumbered
from .decision import MissSink, Recorder, noted_miss

__all__ = ["LinePlayer", "LineTap", "stdio_request"]

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


class LinePlayer:
    """Plays a recorded stdio session to a client; thread-safe, no I/O of its own."""

    def __init__(self, request: Request, response: Response, misses: MissSink | None) -> None:
        self.request = request
        self._frames = (response.websocket or WebSocketSession()).frames
        self._misses = misses
        self._next = 0
        self._renumbering = Renumbering()
        self._lock = threading.Lock()
        #: The server's exit status once the recording says its output ended.
        self.exit_code: int | None = None
        self.ended = False

    def opening(self) -> list[bytes]:
        """What the server wrote before the client's first line (most write nothing)."""
        with self._lock:
            return self._server_lines()

    def client_wrote(self, line: bytes) -> list[bytes]:
        """The server's lines that answer ``line`` (each ending in a newline); raises
        :class:`CassetteMiss` when ``line`` is not the next line the client wrote recorded."""
        sent = Frame("client", "text", line.rstrip(b"\r\n"))
        with self._lock:
            if self.ended:  # the server had exited: the line goes nowhere, as it did live
                return []
            index = next(
                (i for i in range(self._next, len(self._frames)) if self._frames[i].sender == "client"), None
            )
            recorded = self._frames[index] if index is not None else None
            if recorded is None or recorded.kind == "close" or frame_differences(recorded, sent):
                count = sum(
                    1 for f in self._frames[: self._next] if f.sender == "client" and f.kind != "close"
                )
                raise self._miss(
                    count, None if recorded is None or recorded.kind == "close" else recorded, sent
                )
            assert index is not None
            self._renumbering.learn(frame_json(recorded), frame_json(sent))
            self._next = index + 1
            return self._server_lines()

    def client_closed(self) -> list[bytes]:
        """The client closed the server's stdin: what the server still wrote; its exit follows."""
        with self._lock:
            while self._next < len(self._frames) and self._frames[self._next].sender == "client":
                self._next += 1  # lines the client did not write this time, its close
            lines = self._server_lines()
            self.ended = True
            return lines

    def _server_lines(self) -> list[bytes]:
        lines = []
        while self._next < len(self._frames) and self._frames[self._next].sender == "server":
            frame = self._frames[self._next]
            self._next += 1
            if frame.kind == "close":
                self.ended, self.exit_code = True, frame.code
                break
            data = frame.data
            if self._renumbering:
                text = text_renumbered(data.decode("utf-8", "replace"), self._renumbering)
                data = data if text is None else text.encode()
            lines.append(data + b"\n")
        return lines

    def _miss(self, count: int, recorded: Frame | None, sent: Frame) -> CassetteMiss:
        def message(path: Path) -> str:
            return frame_miss_message(path, self.request.url, count, recorded, sent, transport="MCP stdio")

        return noted_miss(self._misses, self.request, message)
