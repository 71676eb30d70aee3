"""The aiohttp application: each request routed to its cassette and upstream, then decided.

``/[CASSETTE/]UPSTREAM/<path>``: the cassette (see :mod:`.shelf` for how a request names it)
decides with :meth:`~promptvcr.Cassette.handle`, exactly as for an in-process request:
``Replay`` is played out from the cassette, ``Record`` and ``PASS_THROUGH`` are relayed
upstream (recorded or not), and a :class:`~promptvcr.CassetteMiss` becomes the provider's API
error carrying its message, also printed to the server's log. A websocket handshake goes to
:mod:`.sockets`. The admin endpoints are in :mod:`.admin`.

The upstream of a name is the ``--upstream`` given on the command line, else the one the
cassette recorded it from (:meth:`.served.ServedCassette.upstream_for`), else the built-in one.

Bounded: at most ``limits.concurrent`` requests are served at once (the next gets a clear
``503``, which SDKs retry after its ``retry-after``), and a request body must arrive within
``limits.body_timeout`` (the header timeout is the runner's, see :mod:`.running`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass

import aiohttp
from aiohttp import web

from ..cassettes.models import Request
from ..cassettes.spool import SpooledChunks
from ..errors import CassetteError, CassetteMiss
from ..interceptors.decision import Record, Replay
from .admin import ADMIN_PREFIX, add_admin_routes, foreign
from .inbound import is_websocket, read_body, to_request, with_large_body
from .miss_reply import error_response
from .playout import play_out
from .relay import UPSTREAM_FAILED, relay
from .served import ServedCassette
from .shelf import CASSETTE_HEADER, BadPath, Shelf
from .upstreams import BUILTIN_UPSTREAMS

__all__ = ["SESSION", "SHELF", "STOP", "Limits", "build_app"]

log = logging.getLogger("promptvcr.server")


@dataclass(frozen=True)
class Limits:
    """How much the server takes on: requests at once, seconds for a request's headers and body,
    seconds an injected timeout keeps a connection silent before closing it."""

    concurrent: int = 256
    header_timeout: float = 15.0
    body_timeout: float = 60.0
    fault_silence: float = 10.0


SHELF = web.AppKey("shelf", Shelf)
SESSION = web.AppKey("session", aiohttp.ClientSession)
STOP = web.AppKey("stop", asyncio.Event)
LIMITS = web.AppKey("limits", Limits)
_UPSTREAMS: web.AppKey[dict[str, str]] = web.AppKey("upstreams")
_GIVEN: web.AppKey[dict[str, str]] = web.AppKey("given")
_BUSY: web.AppKey[list[int]] = web.AppKey("busy")


def build_app(shelf: Shelf, upstreams: Mapping[str, str], limits: Limits | None = None) -> web.Application:
    app = web.Application(client_max_size=1 << 30)
    app[SHELF] = shelf
    app[_UPSTREAMS] = dict(upstreams)
    app[_GIVEN] = {name: url for name, url in upstreams.items() if BUILTIN_UPSTREAMS.get(name) != url}
    app[STOP] = asyncio.Event()
    app[LIMITS] = limits or Limits()
    app[_BUSY] = [0]
    app.cleanup_ctx.append(_client_session)
    add_admin_routes(app, SHELF, STOP)
    app.router.add_route("*", "/{tail:.*}", _serve)
    return app


async def _client_session(app: web.Application) -> AsyncIterator[None]:
    connector = aiohttp.TCPConnector(limit=0, limit_per_host=0)
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=30)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout, auto_decompress=True) as session:
        app[SESSION] = session
        yield


def _usage(shelf: Shelf) -> str:
    where = "/CASSETTE/UPSTREAM/<path>" if shelf.folder else "/UPSTREAM/<path>"
    return (
        f"promptvcr serve ({shelf.path or 'cassettes started per test'}) serves {where}, "
        f"the cassette named by the {CASSETTE_HEADER} header or started with POST {ADMIN_PREFIX}start"
    )


def _cassette(incoming: web.Request) -> tuple[ServedCassette, str, str]:
    """(cassette, upstream name, rest of the path) of a request; ValueError says why none."""
    shelf = incoming.app[SHELF]
    first, _, after = incoming.match_info["tail"].partition("/")
    header = incoming.headers.get(CASSETTE_HEADER)
    if shelf.folder and header is None and first not in incoming.app[_UPSTREAMS]:
        upstream, _, rest = after.partition("/")
        return shelf.get(first), upstream, rest
    return (shelf.named(header) if header else shelf.default()), first, after


def _upstream(incoming: web.Request, cassette: ServedCassette, name: str, rest: str) -> str | None:
    given = incoming.app[_GIVEN].get(name)
    if given is not None:
        return given
    return cassette.upstream_for(name, rest) or incoming.app[_UPSTREAMS].get(name)


def _bare(incoming: web.Request) -> Request:
    return Request(incoming.method, f"http://unknown{incoming.path}", dict(incoming.headers))


async def _serve(incoming: web.Request) -> web.StreamResponse:
    busy, limits = incoming.app[_BUSY], incoming.app[LIMITS]
    if busy[0] >= limits.concurrent:
        message = (
            f"promptvcr serve is serving {busy[0]} requests at once, its limit "
            f"(--max-concurrent {limits.concurrent}): retry, or start it with a higher limit."
        )
        reply = error_response(_bare(incoming), message, 503, "promptvcr_busy")
        reply.headers["retry-after"] = "1"
        return await play_out(incoming, reply)
    busy[0] += 1
    try:
        return await _decide(incoming)
    finally:
        busy[0] -= 1


async def _decide(incoming: web.Request) -> web.StreamResponse:
    shelf = incoming.app[SHELF]
    why = foreign(incoming) if CASSETTE_HEADER in incoming.headers else None
    if why is not None:  # a path to open, from what may be a web page (DNS rebinding)
        message = (
            f"promptvcr serve: the {CASSETTE_HEADER} header is taken from programs on this machine only; "
            f"refused {why}."
        )
        return await play_out(incoming, error_response(_bare(incoming), message, 403, "promptvcr_forbidden"))
    try:
        cassette, upstream_name, rest = _cassette(incoming)
    except BadPath as error:
        message = f"promptvcr serve: {error}."
        return await play_out(
            incoming, error_response(_bare(incoming), message, 400, "promptvcr_bad_cassette_path")
        )
    except ValueError as error:
        message = f"{_usage(shelf)}: {error}"
        return await play_out(
            incoming, error_response(_bare(incoming), message, 404, "promptvcr_no_cassette")
        )
    except CassetteError as error:  # a cassette that cannot be read
        log.error("%s", error)
        return await play_out(
            incoming, error_response(_bare(incoming), str(error), 500, "promptvcr_cassette_error")
        )
    upstream = _upstream(incoming, cassette, upstream_name, rest)
    if upstream is None:
        known = ", ".join(sorted({*incoming.app[_UPSTREAMS], *cassette.upstreams}))
        message = (
            f"{_usage(shelf)}; {upstream_name!r} is not an upstream (known: {known}). "
            f"Add one with --upstream NAME=URL."
        )
        return await play_out(
            incoming, error_response(_bare(incoming), message, 404, "promptvcr_unknown_upstream")
        )
    websocket = is_websocket(incoming)
    try:
        body = b"" if websocket else await read_body(incoming, incoming.app[LIMITS].body_timeout)
    except TimeoutError:
        message = (
            f"promptvcr serve: the request body did not arrive within {incoming.app[LIMITS].body_timeout:g} s"
        )
        return web.json_response({"error": {"message": message}}, status=408, headers={"connection": "close"})
    spooled = body if isinstance(body, SpooledChunks) else None
    content = b"" if isinstance(body, SpooledChunks) else body
    request = to_request(incoming, upstream, upstream_name, rest, content, websocket=websocket)
    if spooled is not None:  # a large body: keyed from its spool, sent from it
        request = await with_large_body(request, spooled)
    try:
        decision = cassette.handle(request)
    except CassetteMiss as miss:
        log.error("%s", miss)
        if websocket:
            from .sockets import refuse

            return await refuse(incoming, str(miss))
        return await play_out(incoming, error_response(request, str(miss)))
    if websocket:
        from .sockets import record_session, replay_session

        if isinstance(decision, Replay):
            return await replay_session(incoming, request, decision)
        return await record_session(incoming.app[SESSION], incoming, request, decision)
    silence = incoming.app[LIMITS].fault_silence
    if isinstance(decision, Replay):
        return await play_out(incoming, decision.response, silence)
    recorder = decision.recorder if isinstance(decision, Record) else None
    try:
        return await relay(incoming.app[SESSION], incoming, request, recorder, cassette, spooled)
    except aiohttp.ClientError as error:
        message = f"promptvcr serve: could not reach {request.url} for cassette {cassette.path}: {error}"
        log.error("%s", message)
        return await play_out(
            incoming, error_response(request, message, UPSTREAM_FAILED, "promptvcr_upstream")
        )
