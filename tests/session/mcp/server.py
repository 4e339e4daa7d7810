"""A small MCP server for the tests, written with the ``mcp`` SDK.

``python server.py stdio [--slow-start]``, ``python server.py http PORT``,
``python server.py sse PORT`` or ``python server.py modern PORT`` (streamable HTTP that
speaks only the 2026-07-28 revision: every request goes to the SDK's per-request entry, so
the ``initialize`` handshake is refused). Tools: echo,
picture (an image), big (long text), broken (an error result), link (resource link and
embedded resource), crash (the process exits), hang (waits until cancelled and records
the cancellation in $MCP_TEST_RECORD), grow (adds a tool and says the list changed), book
(asks the person for a booking: elicitation). Prompt: review (code, focus). Resource:
notes://today.
"""

from __future__ import annotations

import base64
import os
import sys
import time
from pathlib import Path
from typing import Literal

import anyio
from mcp import types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

#: A 1x1 PNG.
PIXEL = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()

server = MCPServer("picode-test")


def record(line: str) -> None:
    target = os.environ.get("MCP_TEST_RECORD")
    if target:
        with Path(target).open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")


@server.tool(description="Repeat the text.")
def echo(text: str) -> str:
    record(f"echo {text}")
    return f"echo: {text}"


@server.tool(description="A small picture.")
def picture() -> list[types.ContentBlock]:
    return [
        types.TextContent(type="text", text="a pixel"),
        types.ImageContent(type="image", data=PIXEL, mime_type="image/png"),
    ]


@server.tool(description="Many lines.")
def big(lines: int) -> str:
    return "\n".join(f"line {n}" for n in range(1, lines + 1))


@server.tool(description="Always fails.")
def broken() -> str:
    raise ToolError("the disk is on fire")


@server.tool(description="Points at resources.")
def link() -> list[types.ContentBlock]:
    return [
        types.ResourceLink(
            type="resource_link", name="notes", uri="file:///notes.md", mime_type="text/markdown"
        ),
        types.EmbeddedResource(
            type="resource",
            resource=types.TextResourceContents(uri="file:///todo.txt", text="buy milk"),
        ),
    ]


@server.tool(description="The server process exits.")
def crash() -> str:
    os._exit(3)


@server.tool(description="Waits until cancelled.")
async def hang() -> str:
    record("hang started")
    try:
        await anyio.sleep(3600)
    except anyio.get_cancelled_exc_class():
        record("hang cancelled")
        raise
    return "woke up"


@server.tool(description="Adds the tool 'extra'.")
async def grow(ctx: Context) -> str:
    def extra() -> str:
        return "extra here"

    server.add_tool(extra, name="extra", description="Added later.")
    await ctx.session.send_tool_list_changed()
    return "grown"


class Booking(BaseModel):
    name: str = Field(title="Your \x1b[31mname", min_length=2)
    guests: int = Field(title="Guests", ge=1, le=10)
    vegan: bool = Field(default=False, title="Vegan")
    table: Literal["inside", "terrace"] = Field(default="inside", title="Table")


@server.tool(description="Asks the person to book a table.")
async def book(ctx: Context) -> str:
    result = await ctx.elicit("Book a table at \x1b[2JChez MCP?", schema=Booking)
    record(f"book {result.action}")
    if result.action == "accept" and result.data is not None:
        data = result.data
        return f"booked: {data.name}, {data.guests}, vegan={data.vegan}, {data.table}"
    return f"not booked: {result.action}"


@server.prompt(description="Review some code.")
def review(code: str, focus: str = "bugs") -> str:
    record(f"prompt review {code} {focus}")
    return f"Review this code for {focus}:\n{code}"


@server.resource("notes://today", name="today", description="Today's notes.")
def today() -> str:
    record("read notes://today")
    return "buy milk\ncall Ada"


def serve_modern_only(port: int) -> None:
    import uvicorn
    from mcp.server._streamable_http_modern import handle_modern_request
    from starlette.types import Receive, Scope, Send

    lowlevel = server._lowlevel_server
    held: dict[str, object] = {}

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            await handle_modern_request(lowlevel, None, True, held["state"], scope, receive, send)
            return
        # Entered once for the server's life, as the SDK's session manager does.
        async with lowlevel.lifespan(lowlevel) as state:
            held["state"] = state
            await receive()
            await send({"type": "lifespan.startup.complete"})
            await receive()
        await send({"type": "lifespan.shutdown.complete"})

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def main() -> None:
    mode = sys.argv[1]
    record(f"started {os.getpid()}")
    if "--slow-start" in sys.argv:
        time.sleep(3600)
    if mode == "stdio":
        server.run("stdio")
    elif mode == "sse":
        server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    elif mode == "modern":
        serve_modern_only(int(sys.argv[2]))
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))


if __name__ == "__main__":
    main()
