"""The MCP server ``mcp_client.py`` calls: one ``echo`` tool over stdio, written with the SDK."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("bench-echo")


@server.tool(description="Return the text.")
def echo(text: str) -> str:
    return text


if __name__ == "__main__":
    server.run("stdio")
