"""The recording of one live websocket session, tapped from its sans-I/O protocol.

Both websockets clients (asyncio and threads) run the same ``websockets.protocol.Protocol``:
every message the application sends goes through ``send_text``/``send_binary``/
``send_continuation``, every frame written through ``send_frame`` (a close frame: the
application's, or the protocol's when it fails the connection) and every frame received
comes out of ``events_received``. Wrapping these on the protocol object sees each frame as
it passes, and passes it on at once: record mode buffers nothing on the way. When the session
ends (a close frame received, or the end of the stream: an ``eof`` frame when no close frame
came) its frames go to the recorder, once. A text message that is not UTF-8 is kept byte for
byte: the client failed the connection for it (1007), and replayed it fails it again. So is a
frame the client's parser refused (a reserved opcode, an RSV bit without the extension that
sets it): the bytes of the frame it was reading are kept from the protocol's reader, as a
``raw`` frame, and the peer writes them again on replay, so the session ends as it did live
(1002) instead of waiting for a frame never sent. With a recording budget set, each server
message's tokens (a realtime ``response.done``) are counted as it arrives
(:func:`promptvcr.policies.budget.spend_frame`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from ..cassettes.models import Response
from ..cassettes.wsframes import Frame, Kind, Sender, WebSocketSession, with_session
from ..policies import budget
from .decision import Recorder

__all__ = ["FrameTap"]

_OPCODES: dict[int, Kind] = {1: "text", 2: "binary"}
_CLOSE, _CONTINUATION = 8, 0


class FrameTap:
    """Wraps the frame methods of one protocol; ``handshake()`` gives the ``101`` response."""

    def __init__(self, recorder: Recorder, handshake: Callable[[], Response]) -> None:
        self._recorder = recorder
        self._handshake = handshake
        self._frames: list[Frame] = []
        self._partial: dict[Sender, tuple[Kind, bytearray]] = {}
        self._start = time.perf_counter()
        self._lock = threading.Lock()
        self._done = False
        self._counting = budget.counting()  # asked once a session, not at each message
        recorder.started()

    def attach(self, protocol: Any) -> None:
        send_text, send_binary = protocol.send_text, protocol.send_binary
        send_continuation, send_frame = protocol.send_continuation, protocol.send_frame
        events_received, receive_eof = protocol.events_received, protocol.receive_eof
        reading = bytearray()  # the bytes of the frame being parsed (see the module)
        pending: list[tuple[bytes, Frame]] = []
        read_exact, recv_frame = protocol.reader.read_exact, protocol.recv_frame

        def read(n: int) -> Any:
            data = yield from read_exact(n)
            reading.extend(data)
            return data

        def parsed(incoming: Any) -> None:
            reading.clear()  # a whole frame, legal: its payload is recorded as a message
            recv_frame(incoming)

        def text(data: Any, fin: bool = True) -> None:
            send_text(data, fin)
            self._message("client", "text", bytes(data), fin)

        def binary(data: Any, fin: bool = True) -> None:
            send_binary(data, fin)
            self._message("client", "binary", bytes(data), fin)

        def continuation(data: Any, fin: bool) -> None:
            send_continuation(data, fin)
            self._message("client", None, bytes(data), fin)

        def frame(sent: Any) -> None:
            """Every frame written: a close frame here is the application's, or the protocol's
            own when it failed the connection (``fail``: a frame that broke the protocol)."""
            send_frame(sent)
            if sent.opcode.value == _CLOSE and protocol.close_rcvd is None:  # not the echo of the server's
                code, reason = _close_of(sent.data)
                close = Frame("client", "close", reason.encode(), self._now(), code)
                if not reading:
                    self._add(close)
                    return
                # Sent in the middle of a frame: the parser refused it (its error is set once this
                # returns, and the frames before it are yet to be handed over): decided in received().
                pending.append((bytes(reading), close))
                reading.clear()

        def settle() -> None:
            """A close sent while a frame was being read: the refused frame, then the close."""
            while pending:
                raw, close = pending.pop(0)
                refused = getattr(protocol, "parser_exc", None)
                if refused is not None:
                    self._add(Frame("server", "raw", raw, close.at, note=str(refused)))
                self._add(close)

        def received() -> list[Any]:
            events: list[Any] = events_received()
            for event in events:
                opcode = getattr(event, "opcode", None)
                if opcode is None:
                    continue
                if opcode.value == _CLOSE:
                    code, reason = _close_of(event.data)
                    self._add(Frame("server", "close", reason.encode(), self._now(), code))
                    self.finish()
                elif opcode.value in _OPCODES or opcode.value == _CONTINUATION:
                    self._message("server", _OPCODES.get(opcode.value), bytes(event.data), event.fin)
            settle()
            return events

        def eof() -> None:
            settle()
            receive_eof()
            if protocol.close_rcvd is None:  # the server dropped the connection: no close frame
                self._add(Frame("server", "eof", b"", self._now()))
            self.finish()

        protocol.reader.read_exact, protocol.recv_frame = read, parsed
        protocol.send_text, protocol.send_binary = text, binary
        protocol.send_continuation, protocol.send_frame = continuation, frame
        protocol.events_received, protocol.receive_eof = received, eof

    def _now(self) -> float:
        return time.perf_counter() - self._start

    def _message(self, sender: Sender, kind: Kind | None, data: bytes, fin: bool) -> None:
        """A frame of a message; a message sent in fragments is stored once, whole."""
        if kind is not None and fin and sender not in self._partial:
            self._add(Frame(sender, kind, data, self._now()))
            return
        first, buffer = self._partial.setdefault(sender, (kind or "binary", bytearray()))
        buffer.extend(data)
        if fin:
            del self._partial[sender]
            self._add(Frame(sender, first, bytes(buffer), self._now()))

    def _add(self, frame: Frame) -> None:
        with self._lock:
            if self._done:
                return
            self._frames.append(frame)
        if self._counting:
            budget.spend_frame(frame)

    def finish(self) -> None:
        """The session ended: its frames so far go to the recorder (once)."""
        with self._lock:
            if self._done:
                return
            self._done = True
            frames = list(self._frames)
        self._recorder(with_session(self._handshake(), WebSocketSession(frames)))


def _close_of(data: bytes) -> tuple[int | None, str]:
    if len(data) < 2:
        return None, ""
    return int.from_bytes(data[:2], "big"), data[2:].decode("utf-8", "replace")
