"""MCP over stdio in-process: the server processes that the ``mcp`` SDK's ``stdio_client`` starts.

``stdio_client`` starts every server through one function of its module
(:data:`._compat.MCP_STDIO_SPAWN_SEAM`), which returns an anyio ``Process`` whose ``stdin``
and ``stdout`` it then reads and writes. Replaced for the cassette, it decides the server's
request (:func:`.stdiosession.stdio_request`) like any other:

- replay: no process is started; a :class:`_ReplayedProcess` answers from the recording
  (:class:`.stdiosession.LinePlayer`), so the server's program need not exist;
- record: the real process, its pipes tapped as bytes pass (:class:`.stdiosession.LineTap`);
- pass through: the real process, untouched.
"""

from __future__ import annotations

import math
import signal
import sys
import time
from typing import Any, TextIO

import anyio
import anyio.abc
import mcp.client.stdio as stdio

from ._compat import MCP_STDIO_SPAWN_SEAM, SeamMissing
from .decision import Handler, Record, Replay, Uninstall
from .stdiosession import STALL, Line, LinePlayer, LineTap, stdio_request

__all__ = ["install"]


class _Lines(anyio.abc.ByteSendStream):
    """The replayed server's stdin: each whole line the client writes is answered at once."""

    def __init__(self, process: _ReplayedProcess) -> None:
        self._process = process
        self._partial = b""

    async def send(self, item: bytes) -> None:
        if self._process.returncode is not None:
            raise anyio.BrokenResourceError("the recorded server had exited at this point")
        *lines, self._partial = (self._partial + item).split(b"\n")
        for line in lines:
            self._process.answer(self._process.player.client_wrote(line))

    async def aclose(self) -> None:
        if self._process.returncode is None:
            self._process.answer(self._process.player.client_closed())


class _Output(anyio.abc.ByteReceiveStream):
    """The replayed server's stdout: what it answered, each line when due; after
    :data:`.stdiosession.STALL` seconds with nothing to read, what it holds back that is due
    anyway."""

    def __init__(self, process: _ReplayedProcess, receive: anyio.abc.ObjectReceiveStream[Line]) -> None:
        self._process, self._receive = process, receive

    async def receive(self, max_bytes: int = 65536) -> bytes:
        line: Line | None = None
        while line is None:
            with anyio.move_on_after(STALL):
                line = await self._receive.receive()
            if line is None:
                self._process.answer(self._process.player.stalled())
        if (wait := line.due - time.monotonic()) > 0:  # timing="recorded"
            await anyio.sleep(wait)
        return line.data

    async def aclose(self) -> None:
        await self._receive.aclose()


class _PipedProcess(anyio.abc.Process):
    """A process as stdio_client sees it: the stdin and stdout a subclass puts in place."""

    _stdin: anyio.abc.ByteSendStream
    _stdout: anyio.abc.ByteReceiveStream

    @property
    def stdin(self) -> anyio.abc.ByteSendStream:
        return self._stdin

    @property
    def stdout(self) -> anyio.abc.ByteReceiveStream:
        return self._stdout


class _ReplayedProcess(_PipedProcess):
    """A server process played from a cassette: it exits when its stdin is closed, or where the
    recorded one exited on its own, with the recorded status."""

    def __init__(self, player: LinePlayer) -> None:
        self.player = player
        self._send, receive = anyio.create_memory_object_stream[Line](math.inf)
        self._stdin, self._stdout = _Lines(self), _Output(self, receive)
        self._returncode: int | None = None
        self._exited = anyio.Event()
        self.answer(player.opening())

    def answer(self, lines: list[Line]) -> None:
        for line in lines:
            self._send.send_nowait(line)
        if self.player.ended:
            self._exit(self.player.exit_code or 0)

    def _exit(self, code: int) -> None:
        if self._returncode is None:
            self._returncode = code
            self._send.close()
            self._exited.set()

    async def aclose(self) -> None:
        await self._stdin.aclose()
        await self._stdout.aclose()

    async def wait(self) -> int:
        await self._exited.wait()
        assert self._returncode is not None
        return self._returncode

    def terminate(self) -> None:
        self._exit(-signal.SIGTERM)

    def kill(self) -> None:
        self._exit(-signal.SIGKILL)

    def send_signal(self, value: signal.Signals) -> None:
        self._exit(-int(value))

    @property
    def pid(self) -> int:
        return 0

    @property
    def returncode(self) -> int | None:
        return self._returncode

    @property
    def stderr(self) -> None:
        return None


class _TappedInput(anyio.abc.ByteSendStream):
    def __init__(self, stream: anyio.abc.ByteSendStream, tap: LineTap) -> None:
        self._stream, self._tap = stream, tap

    async def send(self, item: bytes) -> None:
        self._tap.wrote("client", item)  # before the server has it: its answer cannot be taped first
        await self._stream.send(item)

    async def aclose(self) -> None:
        self._tap.closed("client")
        await self._stream.aclose()


class _TappedOutput(anyio.abc.ByteReceiveStream):
    def __init__(self, stream: anyio.abc.ByteReceiveStream, tap: LineTap, process: anyio.abc.Process) -> None:
        self._stream, self._tap, self._process = stream, tap, process

    async def receive(self, max_bytes: int = 65536) -> bytes:
        data = await self._stream.receive(max_bytes)
        self._tap.wrote("server", data)
        return data

    async def aclose(self) -> None:
        await self._stream.aclose()
        self._tap.finish(self._process.returncode)  # stdio_client closes stdout last, after the exit


class _TappedProcess(_PipedProcess):
    """The real server process with its stdin and stdout recorded; anything else is the process's."""

    def __init__(self, process: anyio.abc.Process, tap: LineTap) -> None:
        self._process, self._tap = process, tap
        assert process.stdin is not None and process.stdout is not None
        self._stdin = _TappedInput(process.stdin, tap)
        self._stdout = _TappedOutput(process.stdout, tap, process)

    def __getattr__(self, name: str) -> Any:  # what stdio_client reads of the platform's process
        return getattr(self._process, name)

    async def aclose(self) -> None:
        await self._process.aclose()
        self._tap.finish(self._process.returncode)

    async def wait(self) -> int:
        return await self._process.wait()

    def terminate(self) -> None:
        self._process.terminate()

    def kill(self) -> None:
        self._process.kill()

    def send_signal(self, value: signal.Signals) -> None:
        self._process.send_signal(value)

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    @property
    def stderr(self) -> anyio.abc.ByteReceiveStream | None:
        return self._process.stderr


def install(handler: Handler) -> Uninstall:
    original = getattr(stdio, MCP_STDIO_SPAWN_SEAM, None)
    if original is None:  # the SDK changed: this interceptor steps aside (see .unavailable)
        raise SeamMissing("mcp", f"mcp.client.stdio.{MCP_STDIO_SPAWN_SEAM}")

    async def spawn(
        command: str,
        args: list[str],
        env: dict[str, str] | None = None,
        errlog: TextIO = sys.stderr,
        cwd: Any = None,
    ) -> Any:
        request = stdio_request(command, args)
        decision = handler.handle(request)
        if isinstance(decision, Replay):
            return _ReplayedProcess(LinePlayer(request, decision.response, decision.misses))
        process = await original(command, args, env, errlog, cwd)
        return (
            _TappedProcess(process, LineTap(decision.recorder)) if isinstance(decision, Record) else process
        )

    setattr(stdio, MCP_STDIO_SPAWN_SEAM, spawn)

    def uninstall() -> None:
        setattr(stdio, MCP_STDIO_SPAWN_SEAM, original)

    return uninstall
