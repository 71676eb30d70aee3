"""Running the server until it is told to stop: the ``promptvcr serve`` command's loop.

It listens on 127.0.0.1 (port 0 picks a free one), prints one line with the URL as soon as
it accepts connections (``promptvcr serve: listening on http://127.0.0.1:PORT``, which
:mod:`.launch` waits for), and runs until SIGINT, SIGTERM or ``POST /_promptvcr/shutdown``.
Stopping leaves every cassette, so what was recorded is written, then writes the report.
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

from .app import SHELF, STOP, build_app
from .launch import READY_PREFIX
from .shelf import Shelf

__all__ = ["run"]


async def _main(
    shelf: Shelf, upstreams: Mapping[str, str], host: str, port: int, report: Path | None, out: TextIO
) -> int:
    if not shelf.folder:
        shelf.get()  # load it now: a broken file stops the start, and no request pays for it
    app = build_app(shelf, upstreams)
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=5.0)
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
        await runner.cleanup()  # lets the requests under way finish
        entries = app[SHELF].report()
        errors = app[SHELF].close()
    for error in errors:
        print(f"promptvcr serve: {error}", file=sys.stderr, flush=True)
    if report is not None:
        data: dict[str, Any] = {"cassettes": entries, "errors": errors}
        report.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return 1 if errors else 0


def run(
    shelf: Shelf,
    upstreams: Mapping[str, str],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    report: Path | None = None,
    out: TextIO = sys.stdout,
) -> int:
    """Serve until stopped; 0, or 1 when a cassette could not be written."""
    return asyncio.run(_main(shelf, upstreams, host, port, report, out))
