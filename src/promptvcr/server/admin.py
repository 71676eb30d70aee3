"""The admin endpoints: start and stop a cassette per test, the report, the shutdown.

``POST /_promptvcr/start``  ``{"cassette": PATH, "record_mode": ..., <options>}``: a fresh
playback of the cassette at ``PATH`` (relative to the served folder, else to the server's
working directory); the requests that name no cassette go to it while it is the only one
started. Options: ``record_mode``, ``allow_playback_repeats``, ``on_record_error``,
``max_age``, ``on_stale``, ``on_tool_drift``, ``timing``, ``faults`` (a list of ``--fault``
texts); the others are
the command line's. Answers ``{"cassette", "mode", "header": {NAME: VALUE}}``, or ``400`` with
``{"error": message}`` (a bad option, a corrupt or stale file).

``POST /_promptvcr/stop``  ``{"cassette": PATH, "passed": BOOL}`` (or ``{}`` for the only one
started; ``passed`` says whether its test passed, default true: a failed test's cassette counts
as wholly used, and the run's usage record cannot prove anything unused): writes it and
answers its report: ``played``, ``outcomes``, ``missed`` and ``misses`` (each with the
message its client was given), ``unused``, ``drift`` (verify), ``tool_drift``, ``errors``, and ``ok``, false
when anything missed or failed, so that the test that stops it fails.

``GET /_promptvcr/report`` and ``POST /_promptvcr/shutdown`` as before.

Only programs on this machine may call them: the ``Host`` must be a loopback name (a web page
reached through DNS rebinding has another) and a request with an ``Origin`` header (sent by
browsers, never by SDKs or test runners) is refused, so no web page can start, stop or shut
down the server. The same holds for a request naming its cassette by the
``x-promptvcr-cassette`` header (see :mod:`.app`): a name is a path, whatever folder it names.
A cassette path outside the served folder, or not a regular file, is a ``400`` (see :mod:`.shelf`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from ..errors import CassetteError
from .fault_flags import parse_faults
from .shelf import CASSETTE_HEADER, Shelf

__all__ = ["ADMIN_PREFIX", "add_admin_routes", "foreign", "loopback_only"]

ADMIN_PREFIX = "/_promptvcr/"
_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
#: The options a start may set, each with the check of its JSON type.
_START_OPTIONS: dict[str, Callable[[Any], bool]] = {
    "record_mode": lambda v: isinstance(v, str),
    "allow_playback_repeats": lambda v: isinstance(v, bool),
    "on_record_error": lambda v: isinstance(v, str),
    "max_age": lambda v: isinstance(v, str),
    "on_stale": lambda v: isinstance(v, str),
    "on_tool_drift": lambda v: isinstance(v, str),
    "timing": lambda v: isinstance(v, (str, int, float)) and not isinstance(v, bool),
    "faults": lambda v: isinstance(v, list) and all(isinstance(item, str) for item in v),
}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _host_name(host: str) -> str:
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def foreign(incoming: web.Request) -> str | None:
    """Why ``incoming`` may come from a web page (a foreign ``Host``, an ``Origin``); ``None``
    for a program on this machine."""
    host = _host_name(incoming.headers.get("Host", ""))
    if host not in _LOOPBACK_HOSTS:
        return f"Host {incoming.headers.get('Host', '')!r} is not a loopback name"
    if "Origin" in incoming.headers:
        return f"a request from a web page (Origin: {incoming.headers['Origin']})"
    return None


def loopback_only(handler: Handler) -> Handler:
    """``handler``, refusing a request that could come from a web page (see the module)."""

    async def guarded(incoming: web.Request) -> web.StreamResponse:
        why = foreign(incoming)
        if why is not None:
            return _refused(why)
        return await handler(incoming)

    return guarded


def _refused(why: str) -> web.Response:
    message = f"promptvcr serve: the admin endpoints answer programs on this machine only; refused {why}."
    return web.json_response({"error": message}, status=403)


def _bad(message: str, status: int = 400) -> web.Response:
    return web.json_response({"error": f"promptvcr serve: {message}"}, status=status)


async def _body(incoming: web.Request) -> dict[str, Any]:
    text = await incoming.text() if incoming.can_read_body else ""
    data = json.loads(text) if text.strip() else {}
    if not isinstance(data, dict):
        raise ValueError("the body must be a JSON object")
    return data


def _overrides(data: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(data) - {"cassette", "mode", *_START_OPTIONS})
    if unknown:
        raise ValueError(
            f"unknown field(s) {', '.join(unknown)}; a start takes cassette, {', '.join(_START_OPTIONS)}"
        )
    if "mode" in data:  # the short name, as the issue and Azure's test proxy say it
        data.setdefault("record_mode", data.pop("mode"))
    overrides: dict[str, Any] = {}
    for name, check in _START_OPTIONS.items():
        if name in data:
            if not check(data[name]):
                raise ValueError(f"{name}: {data[name]!r} is not a valid value")
            overrides[name] = data[name]
    if "faults" in overrides:
        overrides["faults"] = parse_faults(overrides["faults"])
    return overrides


def add_admin_routes(
    app: web.Application, shelf_key: web.AppKey[Shelf], stop: web.AppKey[asyncio.Event]
) -> None:
    async def start(incoming: web.Request) -> web.Response:
        shelf = incoming.app[shelf_key]
        try:
            data = await _body(incoming)
            given = data.get("cassette")
            if not isinstance(given, str):
                raise ValueError('the body names no cassette: {"cassette": "path/to/file.yaml"}')
            cassette, previous = shelf.start(given, _overrides(data))
        except (ValueError, CassetteError) as error:
            return _bad(str(error))
        answer: dict[str, Any] = {
            "cassette": str(cassette.path),
            "mode": cassette.record_mode.value,
            "header": {CASSETTE_HEADER: str(cassette.path)},
        }
        if previous is not None:
            answer["previous"] = previous
        return web.json_response(answer)

    async def stop_one(incoming: web.Request) -> web.Response:
        shelf = incoming.app[shelf_key]
        try:
            data = await _body(incoming)
            given = data.get("cassette")
            passed = data.get("passed", True)
            if not isinstance(passed, bool):
                raise ValueError(f"passed: {passed!r} is not true or false")
            named = given if isinstance(given, str) else None
            await shelf.settle(named)  # what its test's clients left under way, written first
            entry = shelf.stop(named, passed=passed)
        except ValueError as error:
            return _bad(str(error))
        except LookupError as error:
            return _bad(str(error).strip("'\""), 404)
        ok = not (entry["missed"] or entry["errors"] or entry["cut_short"])
        return web.json_response({**entry, "ok": ok})

    async def report(incoming: web.Request) -> web.Response:
        return web.json_response({"cassettes": incoming.app[shelf_key].report()})

    async def shutdown(incoming: web.Request) -> web.Response:
        incoming.app[stop].set()
        return web.json_response({"stopping": True})

    app.router.add_post(f"{ADMIN_PREFIX}start", loopback_only(start))
    app.router.add_post(f"{ADMIN_PREFIX}stop", loopback_only(stop_one))
    app.router.add_get(f"{ADMIN_PREFIX}report", loopback_only(report))
    app.router.add_post(f"{ADMIN_PREFIX}shutdown", loopback_only(shutdown))
