"""websockets, the client of the OpenAI Realtime API (``client.realtime.connect``, threads
and asyncio) and of the Gemini Live API (``client.aio.live.connect``).

Two seams see every connection: ``websockets.sync.client.connect``, the threaded client's
one function, redirected in place so that references imported before the cassette see it too
(:func:`._compat.redirect_function`), and the asyncio ``connect`` class's
``open_tcp_connection`` (``create_connection`` before websockets 17; see :mod:`._compat`),
which every asyncio connection, subclass or redirect goes through. The handshake is a
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
from collections.abc import Callable
from typing import Any

import websockets.asyncio.client as async_client
import websockets.sync.client as sync_client
from websockets.datastructures import Headers
from websockets.http11 import USER_AGENT
from websockets.uri import parse_uri

from ..cassettes.models import Request, Response
from ._compat import redirect_function, websockets_async_seam
from .decision import Handler, Record, Replay, Uninstall
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


def install(handler: Handler) -> Uninstall:
    seam, factory_name = websockets_async_seam(async_client.connect)  # before anything is patched
    async_original = getattr(async_client.connect, seam)

    def sync_connect(sync_original: Callable[..., Any], uri: str, **kwargs: Any) -> Any:
        request = _request(uri, kwargs.get("additional_headers"), kwargs.get("user_agent_header", USER_AGENT))
        decision = handler.handle(request)
        if isinstance(decision, Replay):
            peer = _replayed(decision, request)
            inner = kwargs.get("create_connection") or sync_client.ClientConnection

            def replaying(*args: Any, **options: Any) -> Any:
                connection = inner(*args, **options)
                _match_sends(connection, peer, asynchronous=False)
                return connection

            for name in ("ssl", "ssl_context", "server_hostname", "proxy_ssl", "path"):
                kwargs.pop(name, None)
            # unix=True: the socket pair is a unix socket (no TCP options to set on it).
            kwargs.update(sock=peer.client_socket, unix=True, proxy=None, create_connection=replaying)
            wsuri = parse_uri(uri)
            plain = f"ws://{wsuri.host}:{wsuri.port}{wsuri.resource_name}"  # no TLS on the socket pair
            return sync_original(plain, **kwargs)
        if isinstance(decision, Record):
            inner = kwargs.get("create_connection") or sync_client.ClientConnection
            recorder = decision.recorder

            def recording(sock: Any, protocol: Any, **options: Any) -> Any:
                holder: list[Any] = []
                tap = FrameTap(recorder, lambda: _handshake(holder[0])())
                tap.attach(protocol)
                holder.append(inner(sock, protocol, **options))
                return holder[0]

            kwargs["create_connection"] = recording
        return sync_original(uri, **kwargs)

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

    undo_sync = redirect_function(sync_client.connect, sync_connect)
    setattr(async_client.connect, seam, open_connection)

    def uninstall() -> None:
        undo_sync()
        setattr(async_client.connect, seam, async_original)

    return uninstall
