"""The aiohttp application: each request routed to its cassette and upstream, then decided.

``/[CASSETTE/]UPSTREAM/<path>``: the cassette's :meth:`~promptvcr.Cassette.handle` decides,
exactly as for an in-process request: ``Replay`` is played out from the cassette,
``Record`` and ``PASS_THROUGH`` are relayed upstream (recorded or not), and a
:class:`~promptvcr.CassetteMiss` becomes the provider's API error carrying its message,
also printed to the server's log. ``GET /_promptvcr/report`` says what was served so far;
``POST /_promptvcr/shutdown`` stops the server (writing the cassettes), on every platform.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping

import aiohttp
from aiohttp import web

from ..cassettes.models import Request
from ..errors import CassetteError, CassetteMiss
from ..interceptors.decision import Record, Replay
from .inbound import to_request
from .miss_reply import error_response
from .playout import play_out
from .relay import UPSTREAM_FAILED, relay
from .shelf import Shelf

__all__ = ["SESSION", "SHELF", "STOP", "build_app"]

log = logging.getLogger("promptvcr.server")

SHELF = web.AppKey("shelf", Shelf)
SESSION = web.AppKey("session", aiohttp.ClientSession)
STOP = web.AppKey("stop", asyncio.Event)
_UPSTREAMS: web.AppKey[dict[str, str]] = web.AppKey("upstreams")


def build_app(shelf: Shelf, upstreams: Mapping[str, str]) -> web.Application:
    app = web.Application(client_max_size=1 << 30)
    app[SHELF] = shelf
    app[_UPSTREAMS] = dict(upstreams)
    app[STOP] = asyncio.Event()
    app.cleanup_ctx.append(_client_session)
    app.router.add_get("/_promptvcr/report", _report)
    app.router.add_post("/_promptvcr/shutdown", _shutdown)
    app.router.add_route("*", "/{tail:.*}", _serve)
    return app


async def _client_session(app: web.Application) -> AsyncIterator[None]:
    connector = aiohttp.TCPConnector(limit=0, limit_per_host=0)
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=30)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout, auto_decompress=True) as session:
        app[SESSION] = session
        yield


async def _report(incoming: web.Request) -> web.Response:
    return web.json_response({"cassettes": incoming.app[SHELF].report()})


async def _shutdown(incoming: web.Request) -> web.Response:
    incoming.app[STOP].set()
    return web.json_response({"stopping": True})


def _route(incoming: web.Request) -> tuple[str, str, str]:
    """(cassette name, upstream name, rest of the path) of a request."""
    parts = incoming.match_info["tail"].split("/", 2 if incoming.app[SHELF].folder else 1)
    if not incoming.app[SHELF].folder:
        parts.insert(0, "")
    while len(parts) < 3:
        parts.append("")
    return parts[0], parts[1], parts[2]


def _usage(shelf: Shelf) -> str:
    where = "/CASSETTE/UPSTREAM/<path>" if shelf.folder else "/UPSTREAM/<path>"
    return f"promptvcr serve ({shelf.path}) serves {where}"


async def _serve(incoming: web.Request) -> web.StreamResponse:
    shelf = incoming.app[SHELF]
    name, upstream_name, rest = _route(incoming)
    upstreams: dict[str, str] = incoming.app[_UPSTREAMS]
    upstream = upstreams.get(upstream_name)
    if upstream is None:
        known = ", ".join(sorted(upstreams))
        request = Request(incoming.method, f"http://unknown{incoming.path}", dict(incoming.headers))
        message = (
            f"{_usage(shelf)}; {upstream_name!r} is not an upstream (known: {known}). "
            f"Add one with --upstream NAME=URL."
        )
        return await play_out(incoming, error_response(request, message, 404, "promptvcr_unknown_upstream"))
    request = await to_request(incoming, upstream, rest)
    try:
        cassette = shelf.get(name)
    except ValueError as error:
        message = f"{_usage(shelf)}: {error}"
        return await play_out(incoming, error_response(request, message, 404, "promptvcr_no_cassette"))
    except CassetteError as error:  # a folder's cassette that cannot be read
        log.error("%s", error)
        return await play_out(incoming, error_response(request, str(error), 500, "promptvcr_cassette_error"))
    try:
        decision = cassette.handle(request)
    except CassetteMiss as miss:
        log.error("%s", miss)
        return await play_out(incoming, error_response(request, str(miss)))
    if isinstance(decision, Replay):
        return await play_out(incoming, decision.response)
    recorder = decision.recorder if isinstance(decision, Record) else None
    try:
        return await relay(incoming.app[SESSION], incoming, request, recorder)
    except aiohttp.ClientError as error:
        message = f"promptvcr serve: could not reach {request.url} for cassette {cassette.path}: {error}"
        log.error("%s", message)
        return await play_out(
            incoming, error_response(request, message, UPSTREAM_FAILED, "promptvcr_upstream")
        )
