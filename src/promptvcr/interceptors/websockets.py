"""websockets, the client of the OpenAI Realtime API (``client.realtime.connect``, threads
and asyncio) and of the Gemini Live API (``client.aio.live.connect``).

Two seams see every connection. The threaded client's: from websockets 17, the method of its
``reconnect`` class that opens each connection of ``connect``, ``unix_connect`` and the
reconnecting iterator (every retry included); before, ``websockets.sync.client.connect``,
its one function, redirected in place so that references imported before the cassette see
it too (:func:`._compat.redirect_function`). The asyncio ``connect`` class's
``open_tcp_connection`` (``create_connection`` before websockets 17), which every asyncio
connection, subclass or redirect goes through. Each is chosen by what the installed
websockets has (see :mod:`._compat`). The handshake is a
:class:`Request` decided like any other:

- replay: the recorded session is played by a :class:`~.wspeer.ReplayPeer` on a socket
  pair; the code's connection is a real websockets connection whose ``send`` first matches
  each message against the recording;
- record: the connection goes to the network and a :class:`~.wstap.FrameTap` on its
  protocol records the frames as they pass;
- pass through: untouched.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

import websockets.asyncio.client as async_client
import websockets.sync.client as sync_client
from websockets.datastructures import Headers
from websockets.http11 import USER_AGENT
from websockets.uri import parse_uri

from ..cassettes.models import Request, Response
from ._compat import redirect_function, websockets_async_seam, websockets_sync_seam
from .decision import Handler, Record, Recorder, Replay, Uninstall
from .wspeer import ReplayPeer
from .wstap import FrameTap

__all__ = ["install"]


def _request(uri: str, additional_headers: Any, user_agent: Any) -> Request:
    headers = {name.lower(): value for name, value in Headers(additional_headers or {}).raw_items()}
    if user_agent is not None:
        headers.setdefault("user-agent", str(user_agent))
    return Request("GET", uri, headers)


def _handshake(connection: Any) -> Callable[[], Response]:
    def response() -> Response:
        answer = connection.response
        if answer is None:
            return Response(101)
        headers = {name.lower(): value for name, value in answer.headers.raw_items()}
        return Response(answer.status_code, headers)

    return response


def _message(message: Any, text: bool | None) -> tuple[str, bytes] | None:
    if isinstance(message, str):
        return ("binary" if text is False else "text"), message.encode()
    if isinstance(message, (bytes, bytearray, memoryview)):
        return ("text" if text is True else "binary"), bytes(message)
    return None  # fragments (an iterable): sent as they are, not matched


def _match_sends(connection: Any, peer: ReplayPeer, *, asynchronous: bool) -> None:
    """Wrap ``connection.send`` so that each message is matched before it is written."""
    send = connection.send
    if asynchronous:

        async def send_async(message: Any, text: bool | None = None) -> None:
            index = None if (sent := _message(message, text)) is None else peer.client_sends(*sent)
            await send(message, text=text)
            if index is not None:
                peer.sent(index)

        connection.send = send_async
    else:

        def send_sync(message: Any, text: bool | None = None) -> None:
            index = None if (sent := _message(message, text)) is None else peer.client_sends(*sent)
            send(message, text=text)
            if index is not None:
                peer.sent(index)

        connection.send = send_sync


def _replayed(decision: Replay, request: Request) -> ReplayPeer:
    return ReplayPeer(request, decision.response, decision.misses)


def _replaying(inner: Callable[..., Any], peer: ReplayPeer) -> Callable[..., Any]:
    """A threaded ``create_connection`` whose connections match each message they send."""

    def replaying(*args: Any, **options: Any) -> Any:
        connection = inner(*args, **options)
        _match_sends(connection, peer, asynchronous=False)
        return connection

    return replaying


def _recording(inner: Callable[..., Any], recorder: Recorder) -> Callable[..., Any]:
    """A threaded ``create_connection`` whose connections' frames are recorded as they pass."""

    def recording(sock: Any, protocol: Any, **options: Any) -> Any:
        holder: list[Any] = []
        tap = FrameTap(recorder, lambda: _handshake(holder[0])())
        tap.attach(protocol)
        holder.append(inner(sock, protocol, **options))
        return holder[0]

    return recording


def _plain(uri: str) -> str:
    """``uri`` as ``ws://``: a replayed session has no TLS on its socket pair."""
    wsuri = parse_uri(uri)
    return f"ws://{wsuri.host}:{wsuri.port}{wsuri.resource_name}"


def _for_one_call(owner: Any, attributes: dict[str, Any], call: Callable[[], Any]) -> Any:
    saved = {name: getattr(owner, name) for name in attributes}
    for name, value in attributes.items():
        setattr(owner, name, value)
    try:
        return call()
    finally:
        for name, value in saved.items():
            setattr(owner, name, value)


def _install_sync(handler: Handler, seam: tuple[type, str] | None) -> Uninstall:
    """The threaded client: websockets 17's ``reconnect`` method when it has one (``seam``, see
    :data:`._compat.WEBSOCKETS_SYNC_SEAM`), else the ``connect`` function, redirected."""
    if seam is None:
        return redirect_function(sync_client.connect, functools.partial(_connect_before_17, handler))
    owner, method = seam
    original = getattr(owner, method)

    def open_connection(self: Any, deadline: Any) -> Any:  # each connection and retry of reconnect
        request = _request(self.uri, self.additional_headers, self.user_agent_header)
        decision = handler.handle(request)
        if isinstance(decision, Replay):
            peer = _replayed(decision, request)
            replayed = {
                "sock": peer.client_socket,
                "ws_uri": parse_uri(_plain(self.uri)),
                "create_connection": _replaying(self.create_connection, peer),
            }
            return _for_one_call(self, replayed, lambda: original(self, deadline))
        if isinstance(decision, Record):
            recorded = {"create_connection": _recording(self.create_connection, decision.recorder)}
            return _for_one_call(self, recorded, lambda: original(self, deadline))
        return original(self, deadline)

    setattr(owner, method, open_connection)
    return lambda: setattr(owner, method, original)


def _connect_before_17(handler: Handler, sync_original: Callable[..., Any], uri: str, **kwargs: Any) -> Any:
    request = _request(uri, kwargs.get("additional_headers"), kwargs.get("user_agent_header", USER_AGENT))
    decision = handler.handle(request)
    inner = kwargs.get("create_connection") or sync_client.ClientConnection
    if isinstance(decision, Replay):
        peer = _replayed(decision, request)
        for name in ("ssl", "ssl_context", "server_hostname", "proxy_ssl", "path"):
            kwargs.pop(name, None)
        # unix=True: the socket pair is a unix socket (no TCP options to set on it).
        kwargs.update(
            sock=peer.client_socket, unix=True, proxy=None, create_connection=_replaying(inner, peer)
        )
        return sync_original(_plain(uri), **kwargs)
    if isinstance(decision, Record):
        kwargs["create_connection"] = _recording(inner, decision.recorder)
    return sync_original(uri, **kwargs)


def install(handler: Handler) -> Uninstall:
    seam, factory_name = websockets_async_seam(async_client.connect)  # before anything is patched
    sync_seam = websockets_sync_seam(sync_client)
    async_original = getattr(async_client.connect, seam)

    async def open_connection(self: Any) -> Any:
        request = _request(self.uri, self.additional_headers, self.user_agent_header)
        decision = handler.handle(request)
        factory = getattr(self, factory_name)
        if isinstance(decision, Replay):
            peer = _replayed(decision, request)
            loop = asyncio.get_running_loop()
            wsuri = parse_uri(self.uri)
            _, connection = await loop.create_connection(lambda: factory(wsuri), sock=peer.client_socket)
            _match_sends(connection, peer, asynchronous=True)
            return connection
        if not isinstance(decision, Record):
            return await async_original(self)
        recorder = decision.recorder

        def recording(wsuri: Any) -> Any:
            connection = factory(wsuri)
            FrameTap(recorder, _handshake(connection)).attach(connection.protocol)
            return connection

        setattr(self, factory_name, recording)
        try:
            return await async_original(self)
        finally:
            setattr(self, factory_name, factory)

    undo_sync = _install_sync(handler, sync_seam)
    setattr(async_client.connect, seam, open_connection)

    def uninstall() -> None:
        undo_sync()
        setattr(async_client.connect, seam, async_original)

    return uninstall
