"""An MCP server over stdio built with the ``mcp`` SDK's own server library, as most MCP
servers are: the tests start it as a process (``python mcp_stdio_server.py``), through the
SDK's ``stdio_client`` or through ``promptvcr mcp --``, and replay it with this file gone."""

from __future__ import annotations

import anyio
from mcp.server.mcpserver import Context, MCPServer

server: MCPServer = MCPServer("promptvcr-stdio-test")


@server.tool()
async def add(a: int, b: int, delay_ms: int = 0) -> int:
    """Add two numbers, after ``delay_ms`` (concurrent calls then end in another order)."""
    await anyio.sleep(delay_ms / 1000)
    return a + b


@server.tool()
async def count(n: int, ctx: Context) -> str:  # type: ignore[type-arg]
    """Count to ``n``, reporting progress at each step (notifications before the answer)."""
    for step in range(1, n + 1):
        await ctx.report_progress(step, n)
    return f"counted to {n}"


@server.resource("note://greeting")
def greeting() -> str:
    return "hello from stdio"


if __name__ == "__main__":
    server.run("stdio")
