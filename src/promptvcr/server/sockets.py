"""Websocket sessions through the server: the realtime APIs, with the base URL pointed here.

A handshake (``GET`` with ``Upgrade: websocket``) is keyed like any request, at the upstream's
``ws``/``wss`` URL, so a session recorded in-process replays here and the other way round.

- Replay: the server completes the handshake and plays the recorded session: the server
  frames up to the next client frame are sent, then the client's message is awaited and
  matched against the recorded one (:mod:`promptvcr.matching.framediff`). A message that
  differs is a miss like any other (in the report, failing the run): the client gets a close
  frame ``1008`` whose reason starts the miss's message, and the server's log has all of it.
- Record and pass-through: the server connects upstream and relays each message both ways as
  it comes; recording keeps the frames, timed, and writes the session when it ends, and counts
  the tokens each server message reports in the run's recording budget as it arrives.
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

import aiohttp
from aiohttp import WSMsgType, web

from ..cassettes.models import Request, Response
from ..cassettes.wsframes import Frame, Sender, WebSocketSession, with_session
from ..errors import CassetteMiss
from ..interceptors._forwarding import forwarding
from ..interceptors.decision import Decision, Record, Replay
from ..matching.framediff import frame_differences, frame_miss_message
from ..policies import budget
from .inbound import upstream_headers

__all__ = ["record_session", "refuse", "replay_session"]

log = logging.getLogger("promptvcr.server")

#: Close code of a policy violation: the client sent what the recording does not hold.
MISS_CLOSE = 1008


def _protocols(request: Request) -> tuple[str, ...]:
    offered = request.headers.get("sec-websocket-protocol", "")
    return tuple(part.strip() for part in offered.split(",") if part.strip())


async def _accept(incoming: web.Request, request: Request) -> web.WebSocketResponse:
    ws = web.WebSocketResponse(protocols=_protocols(request), autoping=True)
    await ws.prepare(incoming)
    return ws


async def refuse(incoming: web.Request, message: str) -> web.WebSocketResponse:
    """A handshake with no recording: accepted, then closed with the miss's message."""
    ws = web.WebSocketResponse()
    await ws.prepare(incoming)
    await ws.close(code=MISS_CLOSE, message=_reason(message))
    return ws


def _reason(message: str) -> bytes:
    """A close reason holds 123 bytes: the start of the message's first line."""
    return message.splitlines()[0].encode()[:123]


def _frame(sender: Sender, message: aiohttp.WSMessage, at: float) -> Frame | None:
    if message.type is WSMsgType.TEXT:
        return Frame(sender, "text", str(message.data).encode(), at)
    if message.type is WSMsgType.BINARY:
        return Frame(sender, "binary", bytes(message.data), at)
    if message.type is WSMsgType.CLOSE:
        return Frame(sender, "close", str(message.extra or "").encode(), at, message.data)
    return None


async def _send(ws: web.WebSocketResponse | aiohttp.ClientWebSocketResponse, frame: Frame) -> None:
    if frame.kind == "text":
        await ws.send_str(frame.data.decode("utf-8", "replace"))
    elif frame.kind == "binary":
        await ws.send_bytes(frame.data)
    else:
        await ws.close(code=frame.code or 1000, message=frame.data)


def _illegal(frame: Frame) -> bytes | None:
    """The bytes of a recorded frame that the client refused live, to be written as they came:
    a ``raw`` frame, or a text message that is not UTF-8 (aiohttp would send it repaired)."""
    if frame.kind == "raw":
        return frame.data
    if frame.kind != "text":
        return None
    try:
        frame.data.decode("utf-8")
    except UnicodeDecodeError:
        size = len(frame.data)
        length = (
            bytes([size])
            if size < 126
            else (b"\x7e" + size.to_bytes(2, "big") if size < 65536 else b"\x7f" + size.to_bytes(8, "big"))
        )
        return b"\x81" + length + frame.data
    return None


async def replay_session(incoming: web.Request, request: Request, decision: Replay) -> web.StreamResponse:
    """Play the recorded session of ``decision`` to the client (see the module)."""
    response = decision.response
    if response.status != 101 or response.websocket is None:  # a refused handshake, as recorded
        return web.Response(status=response.status, body=response.content)
    ws = await _accept(incoming, request)
    frames = response.websocket.frames
    matched = 0
    for frame in frames:
        if ws.closed:
            break
        if frame.sender == "server":
            raw = _illegal(frame)
            if raw is not None and incoming.transport is not None:  # as it came: the client fails again
                incoming.transport.write(raw)
                continue
            await _send(ws, frame)
            continue
        if frame.kind == "close":
            break  # the client closed first: wait for its close below
        message = await ws.receive()
        sent = _frame("client", message, 0.0)
        if sent is None or sent.kind == "close":
            return ws
        if frame_differences(frame, sent):
            _missed(decision, request, frame_miss_message(_path(decision), request.url, matched, frame, sent))
            await ws.close(
                code=MISS_CLOSE, message=_reason(frame_miss_message(Path("-"), "", matched, frame, sent))
            )
            return ws
        matched += 1
    while not ws.closed:  # the recording is over: what the client sends now was never recorded
        message = await ws.receive()
        sent = _frame("client", message, 0.0)
        if sent is None or sent.kind == "close":
            break
        _missed(decision, request, frame_miss_message(_path(decision), request.url, matched, None, sent))
        await ws.close(code=MISS_CLOSE, message=b"promptvcr: the recorded session has no more client frames")
    return ws


def _path(decision: Replay) -> Path:
    return decision.misses.path if decision.misses is not None else Path("<cassette>")


def _missed(decision: Replay, request: Request, message: str) -> None:
    log.error("%s", message)
    sink = decision.misses
    if sink is None:
        return
    error = CassetteMiss(message, cassette=sink.path)
    sink.missed.append(request)
    sink.note_miss(request, error)
    messages = getattr(sink, "miss_messages", None)
    if messages is not None:
        messages.append((request, message))


async def record_session(
    session: aiohttp.ClientSession, incoming: web.Request, request: Request, decision: Decision
) -> web.StreamResponse:
    """Relay the session to the upstream and back, recording it for a ``Record`` decision."""
    headers = {k: v for k, v in upstream_headers(request).items() if not k.startswith("sec-websocket-")}
    try:
        with forwarding():
            upstream = await session.ws_connect(
                request.url, headers=headers, protocols=_protocols(request), autoclose=False, autoping=True
            )
    except aiohttp.WSServerHandshakeError as error:
        return web.json_response(
            {"error": {"message": f"promptvcr serve: {error}"}}, status=error.status or 502
        )
    recorder = decision.recorder if isinstance(decision, Record) else None
    if recorder is not None:
        recorder.started()
    counting = recorder is not None and budget.counting()
    frames: list[Frame] = []
    began = time.perf_counter()
    ws = await _accept(incoming, request)

    async def pump(
        source: web.WebSocketResponse | aiohttp.ClientWebSocketResponse,
        target: web.WebSocketResponse | aiohttp.ClientWebSocketResponse,
        sender: Sender,
    ) -> None:
        while True:
            message = await source.receive()
            frame = _frame(sender, message, time.perf_counter() - began)
            if frame is None:  # the connection ended without a closing handshake, or broke the protocol
                # kept as the end it was, so that the replay closes the other side here too
                frames.append(Frame(sender, "eof", b"", time.perf_counter() - began))
                if not target.closed:
                    await target.close()
                return
            frames.append(frame)
            if counting:
                budget.spend_frame(frame)
            if not target.closed:
                await _send(target, frame)
            if frame.kind == "close":
                return

    tasks = [
        asyncio.ensure_future(pump(ws, upstream, "client")),
        asyncio.ensure_future(pump(upstream, ws, "server")),
    ]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        await asyncio.wait(tasks, timeout=5.0)  # the other side's close
    finally:
        for task in tasks:
            task.cancel()
        await upstream.close()
        if recorder is not None:
            recorder(with_session(Response(101, {}), WebSocketSession(frames)))
    return ws
