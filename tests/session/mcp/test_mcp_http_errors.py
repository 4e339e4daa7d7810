"""An HTTP MCP server that refuses the connection: the status is named, not lost."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from picode.session.config.mcp import McpServer
from picode.session.mcp.connection import McpConnection


def _server(status: int) -> HTTPServer:
    class Refusing(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_response(status)
            self.send_header("WWW-Authenticate", 'Bearer realm="mcp"')
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST

        def log_message(self, *_args: object) -> None:
            pass

    return HTTPServer(("127.0.0.1", 0), Refusing)


@pytest.fixture(params=[401, 500])
def refusing(request: pytest.FixtureRequest) -> Iterator[tuple[int, str]]:
    server = _server(request.param)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield request.param, f"http://127.0.0.1:{server.server_port}/mcp"
    server.shutdown()
    server.server_close()


def test_an_http_error_at_connection_names_its_status(
    refusing: tuple[int, str], tmp_path: Path
) -> None:
    status, url = refusing

    async def scenario() -> McpConnection:
        connection = McpConnection(
            "remote", McpServer(url=url, timeout_s=10), tmp_path, lambda: None
        )
        connection.start()
        await asyncio.wait_for(connection.wait_settled(), 20)
        await connection.stop()
        return connection

    connection = asyncio.run(scenario())
    assert connection.error is not None
    assert connection.error.startswith(f"HTTP {status}")
    assert ("authorisation" in connection.error) == (status == 401)
