"""``promptvcr mcp -- <server command ...>``: any MCP server over stdio, through a cassette.

A client in any language (the TypeScript SDK, Go, Rust...) starts this command instead of
the server: it passes the client's lines to the server and the server's back (record, and
pass-through), or answers from the cassette with no server started (replay). The session
is stored as the in-process ``stdio_client`` stores it (:mod:`promptvcr.interceptors.stdiosession`),
so one cassette serves both. The cassette comes from ``--cassette`` or
``$PROMPTVCR_CASSETTE``, the mode from ``--record-mode`` or ``$PROMPTVCR_RECORD_MODE``
(``replay`` when neither is set). Nothing but the server's own lines is written to stdout;
promptvcr's messages (a miss) go to stderr, and a request that missed also gets a JSON-RPC
error answer, so the client fails at once instead of waiting.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import IO

from ...cassette import Cassette
from ...errors import CassetteError, CassetteMiss
from ...interceptors.decision import Record, Replay
from ...interceptors.stdiosession import STALL, Line, LinePlayer, LineTap, stdio_request

ENV_CASSETTE = "PROMPTVCR_CASSETTE"
#: What a JSON-RPC error answer to a request that missed carries (``-32603``: internal error).
_MISS_CODE = -32603


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cassette", type=Path, default=None, help=f"the cassette file (default: ${ENV_CASSETTE})"
    )
    parser.add_argument(
        "--record-mode",
        default=None,
        help="replay, record, rewrite or passthrough (default: $PROMPTVCR_RECORD_MODE, else replay)",
    )
    parser.add_argument("server", nargs=argparse.REMAINDER, help="-- then the server's command and arguments")


class _Stopped(Exception):
    """The client stopped this process (SIGTERM, SIGINT): the session ends where it is."""


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _Stopped


@contextlib.contextmanager
def _stoppable() -> Iterator[None]:
    """SIGTERM (what most clients send to close a stdio server) ends the session cleanly, so
    that a recording is still written."""
    before = {s: signal.signal(s, _stop) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


def _write(out: IO[bytes], lines: list[Line]) -> None:
    """Each line when due (``timing="recorded"``), else at once."""
    for line in lines:
        if (wait := line.due - time.monotonic()) > 0:
            out.flush()
            time.sleep(wait)
        out.write(line.data)
    out.flush()


def _error_answer(line: bytes, miss: CassetteMiss) -> list[Line]:
    """A JSON-RPC error for the request that missed (none for a notification)."""
    try:
        message = json.loads(line)
    except ValueError:
        return []
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        return []
    error = {"code": _MISS_CODE, "message": miss.message}
    return [Line(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}).encode() + b"\n")]


def _read_lines(stdin: IO[bytes], lines: queue.SimpleQueue[bytes]) -> None:
    with contextlib.suppress(OSError, ValueError):
        while line := stdin.readline():
            lines.put(line)
    lines.put(b"")  # the client closed its end


def _replay(player: LinePlayer, stdin: IO[bytes], stdout: IO[bytes]) -> int:
    """Answer the client's lines from ``player``; after :data:`STALL` seconds without one, what
    the player holds back that is due anyway (a reading thread: waiting must not block it)."""
    _write(stdout, player.opening())
    lines: queue.SimpleQueue[bytes] = queue.SimpleQueue()
    threading.Thread(target=_read_lines, args=(stdin, lines), daemon=True).start()
    while not player.ended:
        try:
            line = lines.get(timeout=STALL)
        except queue.Empty:
            _write(stdout, player.stalled())
            continue
        if not line:
            break
        try:
            _write(stdout, player.client_wrote(line))
        except CassetteMiss as miss:
            _write(stdout, _error_answer(line, miss))
            raise
    if not player.ended:
        _write(stdout, player.client_closed())
    return player.exit_code or 0


def _pump(stdin: IO[bytes], server: IO[bytes], tap: LineTap | None) -> None:
    """The client's lines to the server, as they come; its end closes the server's stdin."""
    with contextlib.suppress(OSError, ValueError):  # the server went away first
        while line := stdin.readline():
            server.write(line)
            server.flush()
            if tap is not None:
                tap.wrote("client", line)
    if tap is not None:
        tap.closed("client")
    with contextlib.suppress(OSError):
        server.close()


def _proxy(command: list[str], tap: LineTap | None, stdin: IO[bytes], stdout: IO[bytes]) -> int:
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    threading.Thread(target=_pump, args=(stdin, process.stdin, tap), daemon=True).start()
    try:
        while data := os.read(process.stdout.fileno(), 65536):
            if tap is not None:
                tap.wrote("server", data)
            stdout.write(data)
            stdout.flush()
    except _Stopped:
        process.terminate()
    code = process.wait()
    if tap is not None:
        tap.finish(code)
    return code


def _session(cassette: Cassette, command: list[str]) -> int:
    request = stdio_request(command[0], command[1:])
    decision = cassette.handle(request)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    if isinstance(decision, Replay):
        with contextlib.suppress(_Stopped):
            return _replay(LinePlayer(request, decision.response, decision.misses), stdin, stdout)
        return 0
    return _proxy(
        command, LineTap(decision.recorder) if isinstance(decision, Record) else None, stdin, stdout
    )


def run(args: argparse.Namespace) -> int:
    command: list[str] = args.server[1:] if args.server[:1] == ["--"] else args.server
    path = args.cassette or (Path(os.environ[ENV_CASSETTE]) if os.environ.get(ENV_CASSETTE) else None)
    if not command or path is None:
        missing = (
            "the server's command (after --)"
            if not command
            else f"a cassette (--cassette or ${ENV_CASSETTE})"
        )
        print(
            f"promptvcr mcp: needs {missing}. Example: promptvcr mcp --cassette tests/cassettes/files.yaml "
            f"-- npx -y @modelcontextprotocol/server-filesystem .",
            file=sys.stderr,
        )
        return 2
    try:
        with _stoppable(), Cassette(path, record_mode=args.record_mode) as cassette:
            return _session(cassette, command)
    except CassetteMiss as miss:
        print(miss.message, file=sys.stderr)
        return 1
    except (CassetteError, ValueError) as error:
        print(f"promptvcr mcp: {error}", file=sys.stderr)
        return 1
    except OSError as error:  # the server's program could not be started
        print(
            f"promptvcr mcp: cannot start {command[0]!r}: {error}. Is it installed and on PATH?",
            file=sys.stderr,
        )
        return 127
