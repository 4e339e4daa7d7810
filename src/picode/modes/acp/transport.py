"""JSON-RPC messages as lines on stdin/stdout, answering lines that are not messages.

The protocol library's own line reader logs and drops a line that is not JSON, so the
client never learns why its request went unanswered, and a JSON value that is not an
object stops the connection. Here each such line gets the JSON-RPC error it deserves
(-32700 parse error, -32600 invalid request) and the next line is read as usual.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from picode.modes.json_lines import TooDeepError, loads_line

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


class LineTransport:
    """The ``acp`` Transport protocol: ``send``, ``receive`` (None at end of input), ``close``."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._write_lock = asyncio.Lock()
        self._closed = False

    async def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
        async with self._write_lock:
            if self._closed:
                raise ConnectionError("the client's end of the connection is closed")
            self._writer.write(data)
            await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._read_line()
            if not line:
                return None
            line = line.strip()
            if not line:
                continue
            try:
                message = loads_line(line)
            except TooDeepError as exc:
                await self._refuse(None, INVALID_REQUEST, "Invalid request", str(exc))
                continue
            except ValueError as exc:
                await self._refuse(None, PARSE_ERROR, "Parse error", f"not JSON: {exc}")
                continue
            problem = shape_problem(message)
            if problem is None:
                return dict(message)
            request_id = message.get("id") if isinstance(message, dict) else None
            if not isinstance(request_id, str | int):
                request_id = None
            await self._refuse(request_id, INVALID_REQUEST, "Invalid request", problem)

    async def close(self) -> None:
        async with self._write_lock:
            if self._closed:
                return
            self._closed = True
            self._writer.close()

    async def _refuse(self, request_id: str | int | None, code: int, text: str, why: str) -> None:
        error = {"code": code, "message": text, "data": {"details": why}}
        await self.send({"jsonrpc": "2.0", "id": request_id, "error": error})

    async def _read_line(self) -> bytes:
        chunks: list[bytes] = []
        while True:
            try:
                chunks.append(await self._reader.readuntil(b"\n"))
                return b"".join(chunks)
            except asyncio.LimitOverrunError as exc:
                chunks.append(await self._reader.readexactly(exc.consumed))
            except asyncio.IncompleteReadError as exc:
                chunks.append(exc.partial)
                return b"".join(chunks)


def shape_problem(message: Any) -> str | None:
    """Why ``message`` is not a JSON-RPC request, notification or response, or None."""
    if isinstance(message, list):
        return "batches (JSON arrays) are not supported; send one JSON object per line"
    if not isinstance(message, dict):
        return "a message must be a JSON object"
    if "method" in message:
        if not isinstance(message["method"], str):
            return "method must be a string"
        return None
    if "id" in message and ("result" in message or "error" in message):
        return None
    return "neither a request (method) nor a response (id with result or error)"
