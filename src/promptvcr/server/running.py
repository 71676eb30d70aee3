"""Running the server until it is told to stop: the ``promptvcr serve`` command's loop.

It listens on 127.0.0.1 (port 0 picks a free one), prints one line with the URL as soon as
it accepts connections (``promptvcr serve: listening on http://127.0.0.1:PORT``, which
:mod:`.launch` waits for), and runs until SIGINT, SIGTERM or ``POST /_promptvcr/shutdown``.
Stopping gives the requests under way ``grace`` seconds, cuts the rest (a response being
recorded is written as far as it arrived), leaves every cassette, then writes the report.

The exit status tells a CI job what a log would hide: 0 when every request was served; 1 when
a request missed (even one its client swallowed), a cassette could not be written, or the stop
cut a response short.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from aiohttp import web

from .. import activation
from ..errors import CassetteError
from .app import SHELF, STOP, Limits, build_app
from .launch import READY_PREFIX
from .shelf import Shelf

__all__ = ["run", "verdict"]


def verdict(entries: list[dict[str, Any]]) -> list[str]:
    """Why a server's run failed, one line each (nothing when it did not)."""
    lines = []
    for entry in entries:
        if entry["missed"]:
            shown = ", ".join(entry["missed"][:3])
            lines.append(f"{len(entry['missed'])} request(s) missed in {entry['path']}: {shown}")
        lines.extend(entry["errors"])
        if entry["cut_short"]:
            lines.append(
                f"stopped while {len(entry['cut_short'])} response(s) were arriving for {entry['path']}: "
                f"written as far as they arrived (end: closed): {', '.join(entry['cut_short'][:3])}"
            )
    return lines


async def _main(
    shelf: Shelf,
    upstreams: Mapping[str, str],
    host: str,
    port: int,
    report: Path | None,
    out: TextIO,
    limits: Limits,
    grace: float,
) -> int:
    if shelf.path is not None and not shelf.folder:
        shelf.get()  # load it now: a broken file stops the start, and no request pays for it
    app = build_app(shelf, upstreams, limits)
    runner = web.AppRunner(
        app,
        access_log=None,
        handle_signals=False,
        shutdown_timeout=grace,
        keepalive_timeout=limits.header_timeout,  # a connection's headers must come in that time
        auto_decompress=False,  # a gzip body goes upstream as received
    )
    await runner.setup()
    site = web.TCPSite(runner, host, port, backlog=1024, reuse_address=True)
    await site.start()
    bound = int(runner.addresses[0][1])
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, app[STOP].set)
    print(f"{READY_PREFIX}http://{host}:{bound}", file=out, flush=True)
    try:
        await app[STOP].wait()
    finally:
        await runner.cleanup()  # lets the requests under way finish, for ``grace`` seconds
        entries = app[SHELF].close()
    failures = verdict(entries)
    for line in failures:
        print(f"promptvcr serve: {line}", file=sys.stderr, flush=True)
    if report is not None:
        errors = [error for entry in entries for error in entry["errors"]]
        data: dict[str, Any] = {"cassettes": entries, "errors": errors}
        report.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return 1 if failures else 0


def run(
    shelf: Shelf,
    upstreams: Mapping[str, str],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    report: Path | None = None,
    out: TextIO = sys.stdout,
    limits: Limits | None = None,
    grace: float = 5.0,
) -> int:
    """Serve until stopped; 0, 1 (see the module), or 2 when the cassette cannot be served."""
    activation.hold_patches(True)  # cassettes start and stop per test: the patches stay put
    try:
        return asyncio.run(_main(shelf, upstreams, host, port, report, out, limits or Limits(), grace))
    except CassetteError as error:  # the command line's cassette: corrupt, stale with --on-stale fail
        print(f"promptvcr serve: {error}", file=sys.stderr, flush=True)
        return 2
    finally:
        activation.hold_patches(False)
