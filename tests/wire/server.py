"""A scripted HTTP/1.1 server on 127.0.0.1 for testing providers through their real SDKs.

Each test queues responses; the server answers requests in order, records what it received
(method, path, headers, body) and notices when the client closes the socket, so a test can
assert that an abort really closed the connection. Bodies are lists of byte chunks with
``Pause``, ``Cut`` (drop the connection) and ``Stall`` (send nothing more, keep it open).

It runs in its own threads so it never shares the event loop with the code under test.
"""

from __future__ import annotations

import json
import select
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Pause:
    seconds: float


@dataclass
class Cut:
    """Close the connection abruptly, mid-response."""


@dataclass
class Stall:
    """Send nothing more; hold the connection until the client goes away."""


Chunk = bytes | str | Pause | Cut | Stall


@dataclass
class WireResponse:
    status: int = 200
    body: list[Chunk] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/event-stream"
    #: Streamed bodies use chunked transfer encoding; others send Content-Length.
    chunked: bool = True


def json_response(status: int, payload: Any, headers: dict[str, str] | None = None) -> WireResponse:
    return WireResponse(
        status=status,
        body=[json.dumps(payload)],
        headers=headers or {},
        content_type="application/json",
        chunked=False,
    )


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    received_at: float
    closed_at: float | None = None
    response_done_at: float | None = None
    _closed: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def json(self) -> Any:
        return json.loads(self.body or b"null")

    def wait_closed(self, timeout: float = 5.0) -> bool:
        """True once the server saw the client close this request's connection."""
        return self._closed.wait(timeout)


Responder = WireResponse | Callable[[RecordedRequest], WireResponse]

_READ_SIZE = 1 << 20

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    529: "Overloaded",
}


class WireServer:
    def __init__(self, port: int = 0, *, tls: ssl.SSLContext | None = None) -> None:
        #: A server context: connections are TLS and ``url`` is ``https://``.
        self._tls = tls
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", port))
        #: Answers requests once the queue is empty (demo servers); None → a 500 reply.
        self.default_responder: Callable[[RecordedRequest], WireResponse] | None = None
        self._listener.listen(64)
        self.port: int = self._listener.getsockname()[1]
        self.requests: list[RecordedRequest] = []
        self._queue: list[Responder] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._connections: list[socket.socket] = []
        self._request_seen = threading.Condition(self._lock)

    @property
    def url(self) -> str:
        scheme = "https" if self._tls is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    @property
    def connection_count(self) -> int:
        """Connections accepted so far: fewer than requests when the client reused one."""
        return len(self._connections)

    def enqueue(self, *responses: Responder) -> None:
        with self._lock:
            self._queue.extend(responses)

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> bool:
        deadline = time.monotonic() + timeout
        with self._request_seen:
            while len(self.requests) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._request_seen.wait(remaining)
        return True

    def start(self) -> WireServer:
        thread = threading.Thread(target=self._accept_loop, name="wire-accept", daemon=True)
        thread.start()
        self._threads.append(thread)
        return self

    def stop(self) -> None:
        self._stopping.set()
        # shutdown() wakes threads blocked in accept()/recv(); close() alone does not.
        for sock in (self._listener, *self._connections):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                sock.close()
            except OSError:
                pass
        for thread in self._threads:
            thread.join(timeout=2)

    def __enter__(self) -> WireServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- internals ---------------------------------------------------------------------

    def _accept_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self._connections.append(conn)
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _serve(self, conn: socket.socket) -> None:
        buffer = b""
        last: RecordedRequest | None = None
        try:
            if self._tls is not None:
                conn = self._tls.wrap_socket(conn, server_side=True)
            while not self._stopping.is_set():
                request, buffer = self._read_request(conn, buffer)
                if request is None:
                    if last is not None:
                        self._mark_closed(last)
                    return
                last = request
                keep_open = self._respond(conn, request)
                if not keep_open:
                    return
        except OSError:
            return
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def _read_request(
        self, conn: socket.socket, buffer: bytes
    ) -> tuple[RecordedRequest | None, bytes]:
        while b"\r\n\r\n" not in buffer:
            data = conn.recv(65536)
            if not data:
                return None, b""
            buffer += data
        head, _, rest = buffer.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _version = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0") or 0)
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body, rest = self._read_chunked_body(conn, rest)
        else:
            # One growing buffer: adding each read to a bytes object copied the whole body
            # so far every time, ~8 ms for the 2.6 MB of a long uncompacted conversation,
            # which bench/long_session.py would have counted as the app's.
            received = bytearray(rest)
            while len(received) < length:
                data = conn.recv(_READ_SIZE)
                if not data:
                    return None, b""
                received += data
            body, rest = bytes(received[:length]), bytes(received[length:])
        request = RecordedRequest(method, path, headers, body, time.monotonic())
        with self._request_seen:
            self.requests.append(request)
            self._request_seen.notify_all()
        return request, rest

    def _read_chunked_body(self, conn: socket.socket, rest: bytes) -> tuple[bytes, bytes]:
        body = b""
        while True:
            while b"\r\n" not in rest:
                rest += conn.recv(65536)
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            while len(rest) < size + 2:
                rest += conn.recv(65536)
            body += rest[:size]
            rest = rest[size + 2 :]
            if size == 0:
                return body, rest

    def _next_response(self, request: RecordedRequest) -> WireResponse:
        with self._lock:
            responder = self._queue.pop(0) if self._queue else self.default_responder
        if responder is None:
            return json_response(500, {"error": {"message": "wire server: no scripted response"}})
        return responder(request) if callable(responder) else responder

    def _respond(self, conn: socket.socket, request: RecordedRequest) -> bool:
        response = self._next_response(request)
        reason = _REASONS.get(response.status, "Status")
        head = [f"HTTP/1.1 {response.status} {reason}", f"Content-Type: {response.content_type}"]
        head.extend(f"{k}: {v}" for k, v in response.headers.items())
        if response.chunked:
            head.append("Transfer-Encoding: chunked")
            head.append("Cache-Control: no-cache")
        else:
            payload = b"".join(_as_bytes(c) for c in response.body if isinstance(c, bytes | str))
            head.append(f"Content-Length: {len(payload)}")
        conn.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        if not response.chunked:
            conn.sendall(payload)
            request.response_done_at = time.monotonic()
            return True
        for chunk in response.body:
            if isinstance(chunk, Pause):
                if self._client_closed_during(conn, chunk.seconds, request):
                    return False
            elif isinstance(chunk, Stall):
                self._client_closed_during(conn, None, request)
                return False
            elif isinstance(chunk, Cut):
                conn.shutdown(socket.SHUT_RDWR)
                return False
            else:
                data = _as_bytes(chunk)
                if not data:
                    continue
                try:
                    conn.sendall(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                except OSError:
                    self._mark_closed(request)
                    return False
        try:
            conn.sendall(b"0\r\n\r\n")
        except OSError:
            self._mark_closed(request)
            return False
        request.response_done_at = time.monotonic()
        # Watch for the client closing after the body, so abort tests can still measure.
        return True

    def _client_closed_during(
        self, conn: socket.socket, seconds: float | None, request: RecordedRequest
    ) -> bool:
        deadline = None if seconds is None else time.monotonic() + seconds
        while not self._stopping.is_set():
            timeout = 0.05 if deadline is None else max(0.0, min(0.05, deadline - time.monotonic()))
            readable, _, _ = select.select([conn], [], [], timeout)
            if readable:
                try:
                    data = conn.recv(65536, socket.MSG_PEEK)
                except OSError:
                    data = b""
                if not data:
                    self._mark_closed(request)
                    return True
            if deadline is not None and time.monotonic() >= deadline:
                return False
        return True

    @staticmethod
    def _mark_closed(request: RecordedRequest) -> None:
        if request.closed_at is None:
            request.closed_at = time.monotonic()
        request._closed.set()


def _as_bytes(chunk: bytes | str) -> bytes:
    return chunk if isinstance(chunk, bytes) else chunk.encode("utf-8")


def sse(event: str | None, data: Any) -> str:
    """One server-sent event; ``event=None`` writes a data-only event (Gemini, Chat)."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    prefix = f"event: {event}\n" if event else ""
    return f"{prefix}data: {payload}\n\n"
