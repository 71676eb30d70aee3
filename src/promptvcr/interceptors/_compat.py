"""Every private name of another library that promptvcr touches, in one place.

When httpx2, httpx, respx, urllib3, aiohttp or websockets rename one of these, this is the only file
to change. Each library is optional, so a class of one is imported on first use.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import threading
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .unavailable import SeamMissing

if TYPE_CHECKING:
    from aiohttp import BaseConnector, ClientRequest
    from aiohttp.client_proto import ResponseHandler
    from aiohttp.connector import Connection

__all__ = [
    "AIOHTTP_CONNECT_SEAM",
    "AIOHTTP_RESPONSE_PAYLOAD",
    "CLIENT_TRANSPORT_SEAM",
    "HEADERS_ENCODING",
    "HEADERS_LINES",
    "URLLIB3_ATTEMPT_SEAM",
    "URL_PARTS",
    "WEBSOCKETS_ASYNC_SEAMS",
    "WEBSOCKETS_SYNC_SEAM",
    "SeamMissing",  # from .unavailable, for the interceptors that raise it
    "aiohttp_connect_timeout",
    "aiohttp_response_handler",
    "aiohttp_socketless_connection",
    "content_decoder",
    "headers_with_lines",
    "respx_mocker",
    "respx_pass_through",
    "set_content_decoder",
    "websockets_async_seam",
    "websockets_sync_seam",
]

# --- httpx2 and httpx ------------------------------------------------------------------

#: ``Client._transport_for_url(url)`` picks the transport for each request after the
#: client has applied auth, cookies and redirects. Wrapping what it returns sees every
#: transport (the default pool, mounts, proxies, openai's aiohttp transport) and every
#: client, including ones created before the cassette was entered. httpx and httpx2
#: share it; respx patches the same seam for httpx.
CLIENT_TRANSPORT_SEAM = "_transport_for_url"

#: ``Headers._list``: the header lines, ``(raw name, lower-case name, value)`` bytes tuples, and
#: ``Headers._encoding``: how their bytes are decoded. A played request keeps the lines (shared
#: between requests) rather than the ``Headers`` object, and decodes them with the library's own
#: ``items()`` on first read (see ``_httpx_family.to_request``). Without them, it keeps the headers.
HEADERS_LINES = "_list"
HEADERS_ENCODING = "_encoding"


def headers_with_lines(module: Any, lines: list[tuple[bytes, bytes, bytes]]) -> Any | None:
    """A library ``Headers`` whose lines are ``lines``, made without ``__init__``: the attributes
    of an empty one, ``HEADERS_LINES`` replaced. ``None`` when an empty one holds anything but
    its lines and encoding (a layout this does not know)."""
    empty = _empty_headers(module)
    if empty is None:
        return None
    headers = object.__new__(module.Headers)
    headers.__dict__.update(empty)
    headers.__dict__[HEADERS_LINES] = lines
    return headers


@functools.cache
def _empty_headers(module: Any) -> dict[str, Any] | None:
    attributes = dict(getattr(module.Headers(), "__dict__", {}))
    known = attributes.keys() == {HEADERS_LINES, HEADERS_ENCODING} and attributes[HEADERS_LINES] == []
    return attributes if known else None


#: ``URL._uri_reference``: a URL's parts, a named tuple its text is made from each time it is
#: asked for. A sent URL's text is looked up by them (see ``_httpx_family.to_request``).
URL_PARTS = "_uri_reference"


def content_decoder(response: Any) -> Any:
    """``Response._get_content_decoder()``: the decoder the library's ``iter_bytes`` reads a
    response's body with, for its ``content-encoding`` (gzip, deflate, br, zstd, several),
    made once and kept on the response as ``Response._decoder``. Its ``decode(bytes)`` and
    ``flush()`` give bytes (httpx) or an iterable of bytes (httpx2).

    A library without that method gets a :class:`_WholeBody`: the body decoded in one piece
    at its end, through the library's public API."""
    get = getattr(response, "_get_content_decoder", None)
    return _WholeBody(response) if get is None else get()


def set_content_decoder(response: Any, decoder: Any) -> None:
    """Put ``decoder`` in ``Response._decoder``, where :func:`content_decoder` found the
    library's: ``iter_bytes`` then decodes the body with it."""
    response._decoder = decoder


class _WholeBody:
    """A decoder that keeps the encoded chunks and decodes them all at the end, through the
    library's public API: a ``Response`` of the same headers over them, read (the library's
    own class: the last before ``object`` in the response's, which may be a subclass)."""

    def __init__(self, response: Any) -> None:
        self._response_class = type(response).__mro__[-2]
        self._headers = response.headers
        self._chunks: list[bytes] = []

    def decode(self, data: bytes) -> bytes:
        self._chunks.append(data)
        return b""

    def flush(self) -> bytes:
        response = self._response_class(200, headers=self._headers, content=b"".join(self._chunks))
        return response.read()  # type: ignore[no-any-return]


# --- respx -----------------------------------------------------------------------------


def respx_mocker(mocker_name: str, wrap: Callable[[Callable[..., Any], Any], Any]) -> type:
    """A respx ``Mocker`` (``respx.mocks``) registered under ``mocker_name``, for
    ``MockRouter(using=mocker_name)``: it patches httpx's clients at
    :data:`CLIENT_TRANSPORT_SEAM`, and each transport the seam picks becomes
    ``wrap(route, transport)``.

    ``route`` is respx's own ``Mocker.handler`` or ``Mocker.async_handler`` (as the client is
    sync or async): given to ``httpx.MockTransport``, it answers a request as the router's
    routes say, or raises :func:`respx_pass_through`. respx registers a Mocker by its name
    for the life of the process when it is defined, so define one once per name.
    """
    import httpx
    from respx.mocks import Mocker

    class PromptvcrMocker(Mocker):
        name = mocker_name
        targets = ["httpx._client.Client", "httpx._client.AsyncClient"]  # noqa: RUF012 (respx's API)
        target_methods = [CLIENT_TRANSPORT_SEAM]  # noqa: RUF012

        @classmethod
        def mock(cls, spec: Callable[..., Any]) -> Callable[..., Any]:
            def seam(client: Any, url: httpx.URL) -> Any:
                route = cls.async_handler if isinstance(client, httpx.AsyncClient) else cls.handler
                return wrap(route, spec(client, url))

            return seam

    return PromptvcrMocker


def respx_pass_through() -> type[Exception]:
    """``respx.models.PassThrough``: raised by a route that passes its request on to the
    real transport; respx's ``MockRouter`` side effect returns the request to do so."""
    from respx.models import PassThrough

    return PassThrough


# --- urllib3 ---------------------------------------------------------------------------

#: ``HTTPConnectionPool._make_request(conn, method, url, body=, headers=, ...)`` (urllib3 2.x)
#: sends one attempt of a request and returns its response. ``urlopen`` wraps it with
#: retries, redirects and the pool's bookkeeping, and ``requests`` and botocore call
#: ``urlopen``: patching the attempt sees every request of all three exactly once.
URLLIB3_ATTEMPT_SEAM = "_make_request"

# --- aiohttp ---------------------------------------------------------------------------

#: ``BaseConnector.connect(req, traces, timeout)`` returns a connection for one request on
#: the wire (redirects and aiohttp's own retries included), after the session has applied
#: cookies, auth and middlewares. The method is documented; its arguments are not.
AIOHTTP_CONNECT_SEAM = "connect"

#: ``ResponseHandler._payload``: the body reader of the response being parsed. aiohttp's
#: own read timeout (``ResponseHandler._on_read_timeout``) fails it along with the
#: protocol; an injected read timeout in mid-body does the same.
AIOHTTP_RESPONSE_PAYLOAD = "_payload"


def aiohttp_connect_timeout(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The ``timeout`` passed to :data:`AIOHTTP_CONNECT_SEAM` after ``req``: the session's
    ``ClientTimeout`` for this request, or ``None`` if not given."""
    return kwargs.get("timeout", args[1] if len(args) > 1 else None)


def aiohttp_response_handler() -> type[ResponseHandler]:
    """``aiohttp.client_proto.ResponseHandler``: the protocol of a connection, built with
    the event loop. It parses a response from the bytes given to ``data_received``;
    ``set_response_params(**params)`` is called once the request is written, to configure
    the parser (the moment a response can be fed). It also keeps the session's
    ``read_timeout`` and ``is_connected()``."""
    from aiohttp.client_proto import ResponseHandler

    return ResponseHandler


def aiohttp_socketless_connection(
    connector: BaseConnector, req: ClientRequest, protocol: ResponseHandler, loop: asyncio.AbstractEventLoop
) -> Connection:
    """A ``Connection`` (``aiohttp.connector``) of ``req`` whose ``protocol`` has no socket
    behind it: released or closed, it closes the protocol instead of returning it to the
    connector's pool (``Connection(connector, key, protocol, loop)``, ``_notify_release``,
    ``_protocol``)."""
    return _socketless_connection_class()(connector, req.connection_key, protocol, loop)


@functools.cache
def _socketless_connection_class() -> type[Connection]:
    from aiohttp.connector import Connection

    class SocketlessConnection(Connection):
        def release(self) -> None:
            self.close()

        def close(self) -> None:
            self._notify_release()
            protocol, self._protocol = self._protocol, None
            if protocol is not None:
                protocol.close()

    return SocketlessConnection


# --- websockets ------------------------------------------------------------------------

#: The asyncio client's seam, newest first: ``(method, factory)``. ``connect.<method>(self)``
#: opens the TCP (or proxy, or unix) connection of every asyncio client, subclasses included
#: (openai's ``_WebSocketConnect``), redirects included, and returns the ``ClientConnection``
#: before its handshake. It builds that connection with ``self.<factory>(ws_uri)``: set on the
#: instance, a wrapper sees the sans-I/O protocol before any frame passes. websockets 17
#: renamed both (``open_tcp_connection``, ``factory``); 15 and 16 have
#: ``create_connection``, ``protocol_factory``. The pair is chosen by which method the class
#: has, not by the version string, so a backport of either layout works too.
WEBSOCKETS_ASYNC_SEAMS = (("open_tcp_connection", "factory"), ("create_connection", "protocol_factory"))


def websockets_async_seam(connect_class: type) -> tuple[str, str]:
    """The ``(method, factory)`` pair of :data:`WEBSOCKETS_ASYNC_SEAMS` that ``connect_class``
    (``websockets.asyncio.client.connect``) has; :class:`SeamMissing` if it has none."""
    for method, factory in WEBSOCKETS_ASYNC_SEAMS:
        if callable(getattr(connect_class, method, None)):
            return method, factory
    names = " or ".join(method for method, _ in WEBSOCKETS_ASYNC_SEAMS)
    raise SeamMissing("websockets", f"websockets.asyncio.client.connect has no {names}")


#: The threaded client's seam in websockets 17: ``reconnect`` (``websockets.sync.client``), the
#: class behind ``connect``, ``unix_connect`` and the reconnecting iterator
#: (``for ws in reconnect(uri)``), opens each connection, every retry included, with
#: ``reconnect.<method>(self, deadline)``, returning the ``ClientConnection`` after its
#: handshake. It reads the instance's ``sock`` (a socket given: nothing opened), ``ws_uri``
#: (TLS when secure) and ``create_connection(sock, protocol, **options)``: set on the instance
#: for one call, a wrapper plays a session on its own socket, or sees the sans-I/O protocol
#: before any frame passes. Before 17 there is no ``reconnect``, and ``connect`` is the one
#: function every threaded connection goes through (redirected in place instead).
WEBSOCKETS_SYNC_SEAM = ("reconnect", "open_connection")


def websockets_sync_seam(module: Any) -> tuple[type, str] | None:
    """``(class, method)`` of :data:`WEBSOCKETS_SYNC_SEAM` in ``module`` (websockets.sync.client);
    ``None`` when it has no such class (before websockets 17), :class:`SeamMissing` when the
    class is there without the method."""
    name, method = WEBSOCKETS_SYNC_SEAM
    owner = getattr(module, name, None)
    if not isinstance(owner, type):
        return None
    if not callable(getattr(owner, method, None)):
        raise SeamMissing("websockets", f"websockets.sync.client.{name} has no {method}")
    return owner, method


def websockets_server_connection(sock: Any) -> Any:
    """A threaded websockets ``ServerConnection`` on ``sock``, not yet handshaken, without
    keepalive pings or a limit on the messages it queues (it reads them only to drop them).
    Whether it takes a ``server`` (websockets 17) is read from its signature."""
    from websockets.server import ServerProtocol
    from websockets.sync.server import ServerConnection

    protocol = ServerProtocol(max_size=None)
    if _server_connection_takes_a_server(ServerConnection):
        # websockets 17: a connection asks its ``Server`` whether it is shutting down
        # (``server.socket_closed``), to refuse a handshake then. This one has no server.
        server = types.SimpleNamespace(socket_closed=threading.Event())
        takes_a_server: Any = ServerConnection  # the signature of 17, not of the version mypy sees
        return takes_a_server(sock, protocol, server, ping_interval=None, max_queue=None)
    return ServerConnection(sock, protocol, ping_interval=None, max_queue=None)


@functools.cache
def _server_connection_takes_a_server(connection_class: type) -> bool:
    return "server" in inspect.signature(connection_class).parameters


def redirect_function(function: Any, replacement: Callable[..., Any]) -> Callable[[], None]:
    """Make every call of ``function`` a call of ``replacement(original, *args, **kwargs)``,
    whoever holds a reference to it: ``websockets.sync.client.connect`` is a function that
    SDKs import by name (``from websockets.sync.client import connect``), so replacing the
    module attribute would miss them. ``function``'s code becomes a trampoline that looks
    ``replacement`` up in its module's globals; ``original`` is a copy of the function as it
    was. Returns the undo."""
    name = f"__promptvcr_redirect_{function.__name__}__"
    namespace: dict[str, Any] = {}
    exec(f"def trampoline(*args, **kwargs):\n    return {name}(*args, **kwargs)\n", namespace)
    original = types.FunctionType(
        function.__code__,
        function.__globals__,
        function.__name__,
        function.__defaults__,
        function.__closure__,
    )
    original.__kwdefaults__ = function.__kwdefaults__
    saved_code = function.__code__
    function.__globals__[name] = functools.partial(replacement, original)
    function.__code__ = namespace["trampoline"].__code__

    def undo() -> None:
        function.__code__ = saved_code
        function.__globals__.pop(name, None)

    return undo


# --- mcp (MCP over stdio; issue 44) ----------------------------------------------------

#: ``mcp.client.stdio._create_platform_compatible_process(command, args, env, errlog, cwd)``
#: starts the server process of every ``stdio_client`` (a new process group on POSIX, a job
#: object on Windows) and returns an anyio ``Process``; ``stdio_client`` looks it up in its
#: module each time, so a replacement set there sees every server started after it. The
#: same name in mcp 1.x and 2.x.
MCP_STDIO_SPAWN_SEAM = "_create_platform_compatible_process"


# --- grpcio ------------------------------------------------------------------------------

#: The multi-callables a channel hands out by call pattern, sync (``grpc._channel``, each name with
#: a leading ``_``) and asyncio (``grpc.aio._channel``): patching their classes covers channels and
#: stubs made before the cassette was entered. Each holds its method (``_method``, bytes), its
#: serializer and the client's response deserializer (``_response_deserializer``).
GRPC_CALLABLES = {
    "unary_unary": "UnaryUnaryMultiCallable",
    "unary_stream": "UnaryStreamMultiCallable",
    "stream_unary": "StreamUnaryMultiCallable",
    "stream_stream": "StreamStreamMultiCallable",
}


def grpc_callable_classes(aio: bool) -> dict[str, type]:
    """The multi-callable classes by call pattern; :class:`SeamMissing` when one moved."""
    import importlib

    module = importlib.import_module("grpc.aio._channel" if aio else "grpc._channel")
    found = {k: getattr(module, name if aio else f"_{name}", None) for k, name in GRPC_CALLABLES.items()}
    missing = [k for k, cls in found.items() if not isinstance(cls, type)]
    if missing or not (aio or hasattr(module, "_InactiveRpcError")):
        raise SeamMissing("grpcio", f"{module.__name__} has no multi-callable or error for {missing}")
    return found  # type: ignore[return-value]


def grpc_method(callable_: Any) -> str:
    return callable_._method.decode("utf-8")  # type: ignore[no-any-return]


def grpc_target(callable_: Any) -> str:
    """Where the call goes: the channel's target, as the client gave it; an asyncio channel's
    from grpcio 1.82 (the Cython channel's), before that ``aio-channel``: no name holds it."""
    target = getattr(callable_, "_target", None) or getattr(callable_._channel, "target", b"aio-channel")
    target = target() if callable(target) else target
    return target.decode("utf-8") if isinstance(target, bytes) else str(target)


def grpc_coders(callable_: Any) -> tuple[Callable[[Any], bytes] | None, Callable[[bytes], Any] | None]:
    """The client's request serializer and response deserializer."""
    return callable_._request_serializer, callable_._response_deserializer


def grpc_raw_clone(callable_: Any) -> Any:
    """The same multi-callable, giving the response messages' bytes (no deserializer): what
    a recording stores before the client's own deserializer reads them."""
    import copy

    clone = copy.copy(callable_)
    clone._response_deserializer = None
    return clone


def grpc_inactive_rpc_error(code: Any, details: str, initial: Any, trailing: Any) -> Exception:
    """The exception a failed sync unary call raises live, ``grpc._channel._InactiveRpcError``."""
    from grpc import _channel

    state = _channel._RPCState((), initial, trailing, code, details)
    return _channel._InactiveRpcError(state)  # type: ignore[no-any-return]
