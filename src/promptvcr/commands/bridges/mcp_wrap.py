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

Whatever ends the session (the server crashing or exiting mid-call, a miss, the client going
away), every call the client made that got no answer gets a JSON-RPC error saying why, and the
process exits with a status, never with the interpreter's abort: the client's lines are read
from file descriptor 0 with ``os.read`` by a thread that holds no lock of ``sys.stdin``'s (a
thread blocked in ``sys.stdin.buffer.readline`` at exit aborted the interpreter: "Fatal Python
error: _enter_buffered_busy").

Replaying, a held answer is let go (:meth:`~promptvcr.interceptors.stdiosession.LinePlayer.stalled`)
only once the client has read everything written to it and then written nothing for
:data:`STALL` seconds: a client slowed down (a loaded machine) is waited for, not overtaken.
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


def _lines(fd: int) -> Iterator[bytes]:
    """The lines read from ``fd`` (each with its newline; the last one as it ends), with
    ``os.read``: no buffered reader's lock is held by the reading thread (see the module)."""
    pending = b""
    with contextlib.suppress(OSError):
        while data := os.read(fd, 65536):
            pending += data
            *whole, pending = pending.split(b"\n")
            for line in whole:
                yield line + b"\n"
    if pending:
        yield pending


def _read_lines(fd: int, lines: queue.SimpleQueue[bytes]) -> None:
    for line in _lines(fd):
        lines.put(line)
    lines.put(b"")  # the client closed its end


class _Calls:
    """The client's calls not answered yet, by JSON-RPC id: what an end answers with an error."""

    def __init__(self) -> None:
        self._open: dict[str, object] = {}
        self._lock = threading.Lock()
        self._server = b""

    def client_wrote(self, line: bytes) -> None:
        message = _message(line)
        if message is not None and "method" in message and "id" in message:
            with self._lock:
                self._open[json.dumps(message["id"])] = message["id"]

    def server_wrote(self, data: bytes) -> None:
        """Server output, in any pieces: each whole line that answers a call closes it."""
        with self._lock:
            self._server += data
            *whole, self._server = self._server.split(b"\n")
            for line in whole:
                message = _message(line)
                if message is not None and "id" in message and "method" not in message:
                    self._open.pop(json.dumps(message["id"]), None)

    def failed(self, why: str) -> list[Line]:
        """A JSON-RPC error for each call still open, saying ``why``; none are open after."""
        with self._lock:
            ids, self._open = list(self._open.values()), {}
        error = {"code": _MISS_CODE, "message": f"promptvcr mcp: {why}"}
        return [Line(json.dumps({"jsonrpc": "2.0", "id": i, "error": error}).encode() + b"\n") for i in ids]


def _message(line: bytes) -> dict[str, object] | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _unread(fd: int) -> int:
    """Bytes written to ``fd`` (a pipe to the client) that the client has not read yet; 0 when
    that cannot be known (not a pipe, not Linux)."""
    try:
        import fcntl
        import struct
        import termios

        return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0])
    except (ImportError, OSError, AttributeError):
        return 0


def _replay(player: LinePlayer, calls: _Calls, stdout: IO[bytes]) -> int:
    """Answer the client's lines from ``player``; when the client has read all it was given and
    then written nothing for :data:`STALL` seconds, what the player holds back that is due anyway
    (a reading thread: waiting must not block it)."""
    _write(stdout, player.opening())
    lines: queue.SimpleQueue[bytes] = queue.SimpleQueue()
    threading.Thread(target=_read_lines, args=(0, lines), daemon=True).start()
    while not player.ended:
        try:
            line = lines.get(timeout=STALL)
        except queue.Empty:
            if _unread(stdout.fileno()) == 0:  # the client read it all, and is waiting: let go
                _answered(stdout, calls, player.stalled())
            continue
        if not line:
            break
        calls.client_wrote(line)
        try:
            _answered(stdout, calls, player.client_wrote(line))
        except CassetteMiss as miss:
            _answered(stdout, calls, _error_answer(line, miss))
            raise
    if not player.ended:
        _answered(stdout, calls, player.client_closed())
    return player.exit_code or 0


def _answered(stdout: IO[bytes], calls: _Calls, lines: list[Line]) -> None:
    for line in lines:
        calls.server_wrote(line.data)
    _write(stdout, lines)


def _pump(server: int, tap: LineTap | None, calls: _Calls) -> None:
    """The client's lines to the server, as they come; its end closes the server's stdin."""
    with contextlib.suppress(OSError):  # the server went away first
        for line in _lines(0):
            calls.client_wrote(line)
            if tap is not None:  # before the server has it: its answer cannot be taped first
                tap.wrote("client", line)
            view = memoryview(line)
            while view:
                view = view[os.write(server, view) :]
    if tap is not None:
        tap.closed("client")
    with contextlib.suppress(OSError):
        os.close(server)


def _proxy(command: list[str], tap: LineTap | None, calls: _Calls, stdout: IO[bytes]) -> int:
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    server_in = os.dup(process.stdin.fileno())  # written by the pump alone, closed by it
    process.stdin.close()
    threading.Thread(target=_pump, args=(server_in, tap, calls), daemon=True).start()
    try:
        while data := os.read(process.stdout.fileno(), 65536):
            if tap is not None:
                tap.wrote("server", data)
            calls.server_wrote(data)
            stdout.write(data)
            stdout.flush()
    except _Stopped:
        process.terminate()
    code = process.wait()
    if tap is not None:
        tap.finish(code)
    with contextlib.suppress(OSError, ValueError):  # the client may be gone too
        _write(stdout, calls.failed(f"the MCP server {command[0]!r} exited (status {code}) before answering"))
    return code


def _session(cassette: Cassette, command: list[str], calls: _Calls) -> int:
    request = stdio_request(command[0], command[1:])
    decision = cassette.handle(request)
    stdout = sys.stdout.buffer
    if isinstance(decision, Replay):
        with contextlib.suppress(_Stopped):
            return _replay(LinePlayer(request, decision.response, decision.misses), calls, stdout)
        return 0
    return _proxy(
        command, LineTap(decision.recorder) if isinstance(decision, Record) else None, calls, stdout
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
    calls = _Calls()
    try:
        with _stoppable(), Cassette(path, record_mode=args.record_mode) as cassette:
            return _session(cassette, command, calls)
    except CassetteMiss as miss:
        print(miss.message, file=sys.stderr)
        _unanswered(calls, "the session missed in the cassette (see the message above)")
        return 1
    except (CassetteError, ValueError) as error:
        print(f"promptvcr mcp: {error}", file=sys.stderr)
        _unanswered(calls, str(error))
        return 1
    except OSError as error:  # the server's program could not be started
        print(
            f"promptvcr mcp: cannot start {command[0]!r}: {error}. Is it installed and on PATH?",
            file=sys.stderr,
        )
        return 127
    except Exception as error:  # anything else: still answer the client, and exit with a status
        print(f"promptvcr mcp: {type(error).__name__}: {error}", file=sys.stderr)
        _unanswered(calls, f"the wrapper failed: {type(error).__name__}: {error}")
        return 1


def _unanswered(calls: _Calls, why: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        _write(sys.stdout.buffer, calls.failed(why))
