"""A loopback MCP server built with the ``mcp`` server library (streamable HTTP at ``/mcp``,
the older SSE transport at ``/sse``), run by uvicorn in a thread, started and stopped by the
test that needs it."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import anyio
import uvicorn
from mcp.server.mcpserver import Context, MCPServer


def _server(title: str | None = None, counting: bool = False) -> MCPServer:
    """``title``: the ``add`` tool has one (a server that changed since a recording);
    ``counting``: a ``count`` tool too, which reports progress."""
    server: MCPServer = MCPServer("promptvcr-test")

    if counting:

        @server.tool()
        async def count(n: int, ctx: Context) -> str:  # type: ignore[type-arg]
            """Count to ``n``, reporting progress at each step (notifications before the answer)."""
            for step in range(1, n + 1):
                await ctx.report_progress(step, n)
            return f"counted to {n}"

    @server.tool(title=title)
    async def add(a: int, b: int, delay_ms: int = 0) -> int:
        """Add two numbers, after ``delay_ms`` (concurrent calls then end in another order)."""
        await anyio.sleep(delay_ms / 1000)
        return a + b

    @server.tool()
    async def announce(ctx: Context) -> str:  # type: ignore[type-arg]
        """Tell every client the tool list changed (a notification on the GET stream)."""
        await ctx.session.send_tool_list_changed()
        return "announced"

    return server


class McpServer:
    """``with McpServer() as server:`` ``server.url`` (streamable HTTP) until exit."""

    def __init__(
        self, *, transport: str = "streamable-http", title: str | None = None, counting: bool = False
    ) -> None:
        self.transport = transport
        self.title = title
        self.counting = counting
        self.port = 0
        self._uvicorn: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        path = "/mcp" if self.transport == "streamable-http" else "/sse"
        return f"http://127.0.0.1:{self.port}{path}"

    def __enter__(self) -> McpServer:
        app: Any = _server(self.title, self.counting)
        asgi = app.streamable_http_app() if self.transport == "streamable-http" else app.sse_app()
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(asgi, log_level="warning", lifespan="on")
        self._uvicorn = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._uvicorn.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._uvicorn.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the MCP server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._uvicorn is not None and self._thread is not None
        self._uvicorn.should_exit = True
        self._thread.join(10)
