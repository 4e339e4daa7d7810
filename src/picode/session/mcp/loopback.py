"""The loopback listener an MCP login's browser comes back to (RFC 8252)."""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import parse_qs, urlsplit

from mcp.shared.auth import AuthorizationCodeResult

from picode.session.mcp.status import McpLoginError as LoginError

CALLBACK_PATH = "/callback"


class LoopbackListener:
    """``http://127.0.0.1:PORT/callback``: where the browser brings the authorization code."""

    def __init__(self, server_name: str) -> None:
        self._name = server_name
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None
        self.port = 0

    async def start(self, port: int) -> None:
        self._result = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", port)
        self.port = self._server.sockets[0].getsockname()[1]

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def wait(self) -> AuthorizationCodeResult:
        assert self._result is not None
        return await asyncio.shield(self._result)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), 10)
            with contextlib.suppress(Exception):
                while (await asyncio.wait_for(reader.readline(), 10)).strip():
                    pass
            status, page = self._answer(line.decode("latin-1"))
            body = f"<!doctype html><title>picode</title><p>{page}</p>".encode()
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        except (OSError, TimeoutError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    def _answer(self, request_line: str) -> tuple[str, str]:
        parts = request_line.split()
        target = urlsplit(parts[1]) if len(parts) >= 2 and parts[0] == "GET" else None
        if target is None or target.path != CALLBACK_PATH:
            return "404 Not Found", "Not found."
        query = {key: values[0] for key, values in parse_qs(target.query).items()}
        result = self._result
        if result is None or result.done():
            return "409 Conflict", "This login is already over; you can close this tab."
        if "error" in query:
            reason = query["error"]
            if query.get("error_description"):
                reason += f": {query['error_description']}"
            result.set_exception(LoginError(f"the authorization server refused: {reason}"))
            return "400 Bad Request", "The login was refused; see picode for details."
        if "code" not in query:
            return "400 Bad Request", "No authorization code in this request."
        result.set_result(
            AuthorizationCodeResult(
                code=query["code"], state=query.get("state"), iss=query.get("iss")
            )
        )
        return "200 OK", "picode is logged in. You can close this tab."
