"""A recorded websocket session played back by a peer on the other end of a socket pair.

The client keeps its real connection object (asyncio or threads) and talks the real
websocket protocol, over ``socket.socketpair()`` rather than the network: the peer, a
websockets server connection in a thread, answers the handshake as recorded and sends the
recorded server frames. Each message the code sends is matched, in the code's own thread
before it is written, against the next client frame of the recording
(:mod:`promptvcr.matching.framediff`): a difference raises :class:`~promptvcr.CassetteMiss`
from ``send``; a match releases the server frames that followed it, paced by the recorded
timing when the cassette asks for it, and cut where a fault says.
"""

from __future__ import annotations

import queue
import socket
import threading
import time
from pathlib import Path
from typing import Any

from ..cassettes.models import Request, Response
from ..cassettes.wsframes import Frame, WebSocketSession
from ..errors import CassetteMiss
from ..matching.framediff import frame_differences, frame_miss_message
from .decision import MissSink, noted_miss

__all__ = ["ReplayPeer"]

#: Headers the peer's own handshake writes: the recorded ones would be wrong or repeated.
_HANDSHAKE_HEADERS = frozenset(
    {"upgrade", "connection", "sec-websocket-accept", "sec-websocket-extensions", "content-length", "date"}
)
_IDLE = 0.05


class ReplayPeer:
    """Serves one recorded session to the client end of a socket pair (:attr:`client_socket`)."""

    def __init__(self, request: Request, response: Response, misses: MissSink | None = None) -> None:
        self.request, self.response = request, response
        self._misses = misses
        self._frames = (response.websocket or WebSocketSession()).frames
        playback = response.playback
        self._times = (playback.chunk_times if playback is not None else None) or None
        self._break_at = playback.break_after if playback is not None and playback.breakage else None
        self._next = 0  # the next frame of the recording to play
        #: Whether the recording ends the connection (a close frame, or a side dropping it).
        self._ended = any(frame.kind in ("close", "eof") for frame in self._frames)
        self._sent = 0  # server frames sent (a fault cuts the connection after ``break_after``)
        self._lock = threading.Lock()
        self._released: queue.SimpleQueue[tuple[int, float] | None] = queue.SimpleQueue()
        self.client_socket, self._socket = socket.socketpair()
        self._thread = threading.Thread(target=self._serve, name="promptvcr-websocket-replay", daemon=True)
        self._thread.start()

    # The code's side: a message it sends ------------------------------------------------------

    def client_sends(self, kind: str, data: bytes) -> int | None:
        """Match one message the code is about to send; raises :class:`CassetteMiss` when it
        differs. Once it is written, :meth:`sent` releases the server frames that follow it.
        ``None`` after the recorded session's end: the send fails or is lost, as it was live."""
        sent = Frame("client", "text" if kind == "text" else "binary", data)
        with self._lock:
            index = self._next_client()
            recorded = self._frames[index] if index is not None else None
            if recorded is None and self._ended:
                return None
            if recorded is None or frame_differences(recorded, sent):
                count = sum(1 for frame in self._frames[: self._next] if frame.sender == "client")
                raise self._miss(count, recorded, sent)
            assert index is not None
            self._next = index + 1
        return index

    def sent(self, index: int) -> None:
        """Client frame ``index`` is on its way: the peer sends what followed it."""
        self._released.put((index, time.perf_counter()))

    def _miss(self, count: int, recorded: Frame | None, sent: Frame) -> CassetteMiss:
        def message(path: Path) -> str:
            return frame_miss_message(path, self.request.url, count, recorded, sent)

        return noted_miss(self._misses, self.request, message)

    def _next_client(self) -> int | None:
        for index in range(self._next, len(self._frames)):
            if self._frames[index].sender == "client" and self._frames[index].kind != "close":
                return index
        return None

    # The peer's side: a thread ---------------------------------------------------------------

    def _serve(self) -> None:
        from ._compat import websockets_server_connection

        connection = websockets_server_connection(self._socket)
        try:
            connection.handshake(process_request=self._reject, process_response=self._headers)
        except Exception:  # the client went away during the handshake
            self._socket.close()
            return
        if self.response.status != 101:
            return
        self._play(connection, start=-1, anchor=time.perf_counter())
        while connection.protocol.state.name != "CLOSED":
            try:
                released = self._released.get(timeout=_IDLE)
            except queue.Empty:
                continue
            if released is None or not self._play(connection, *released):
                return

    def _play(self, connection: Any, start: int, anchor: float) -> bool:
        """Send the server frames after frame ``start`` up to the next client frame; ``False``
        when the session is over (closed as recorded, or cut by a fault)."""
        base = self._times[start] if self._times is not None and start >= 0 else 0.0
        for index in range(start + 1, len(self._frames)):
            frame = self._frames[index]
            cut = self._break_at is not None and self._sent >= self._break_at  # a fault
            if frame.sender == "server" and (cut or frame.kind == "eof"):
                self._socket.shutdown(socket.SHUT_RDWR)  # the connection drops, no close frame
                self._socket.close()
                return False
            if frame.sender == "client":  # its message releases what follows; its close ends the play
                return True
            if self._times is not None:
                delay = anchor + (self._times[index] - base) - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
            try:
                if frame.kind == "raw":  # an illegal frame, as it came: the client fails on it again
                    self._socket.sendall(frame.data)
                    self._sent += 1
                    continue
                if frame.kind == "close":  # the server closed first; code None: a close without one
                    connection.close(frame.code, frame.data.decode("utf-8", "replace"))
                    return False
                connection.send(frame.data, text=frame.kind == "text")  # bytes as recorded, UTF-8 or not
                self._sent += 1
            except Exception:  # the code closed the connection meanwhile
                return False
        return True

    def _reject(self, connection: Any, request: Any) -> Any:
        if self.response.status == 101:
            return None
        return connection.respond(self.response.status, self.response.content.decode("utf-8", "replace"))

    def _headers(self, connection: Any, request: Any, response: Any) -> Any:
        if response is not None and self.response.status == 101:
            for name, value in self.response.headers.items():
                if name not in _HANDSHAKE_HEADERS:
                    response.headers[name] = value
        return response

    def stop(self) -> None:
        self._released.put(None)
