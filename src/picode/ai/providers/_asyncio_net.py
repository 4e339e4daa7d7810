"""The SDK clients' sockets on asyncio's own transports.

httpx2 reads through httpcore2's anyio backend, which pays per read for what a stream of
small server-sent events does not need: every wait for data registers the socket with the
selector and removes it again (two ``epoll_ctl`` calls), every read opens an anyio cancel
scope for its timeout, and TLS is decrypted in Python over a memory BIO, one
``SSLWantReadError`` per record. A model streams one event per read, so at ~100 deltas a
second that is most of what a delta costs the event loop.

``AsyncioBackend`` implements httpcore2's public ``AsyncNetworkBackend`` with a plain
``asyncio.Protocol``: the transport keeps reading into a queue (paused only past
``HIGH_WATER`` unread bytes), a read that finds data returns it all without waiting, a
timeout is one timer on the loop, and TLS is asyncio's ``start_tls``. Errors and timeouts
raise httpcore2's exceptions, as the anyio backend does, so the SDKs see the same failures.

While a response streams, a reader waiting for data is woken at most once per
``COALESCE_S``: what arrives sooner waits for that moment in the queue and is read with
what follows it. Each wake-up runs the whole way from the socket to the screen (the HTTP
client, the provider, the agent's and the session's tasks, the view's buffer), and a model
sends ~100 events a second, while the reply is drawn at most 20 times a second
(``tui/widgets/pacing.py``): waking 50 times a second shows the same frames with half the
wake-ups. The first ``PROMPT_WAKES`` wake-ups after a request is written are never held
back, so the response's head and its first event arrive as soon as they can; the end of a
chunked body, the end of the stream and a lost connection wake the reader at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections import deque
from collections.abc import Iterable
from typing import Any

import httpcore2
import httpx2
from httpcore2 import AsyncNetworkBackend, AsyncNetworkStream
from httpcore2._utils import is_socket_readable

#: Unread bytes past which the transport stops reading until the reader catches up.
HIGH_WATER = 256 * 1024
#: The shortest time between two wake-ups of a reader while a response streams.
COALESCE_S = 0.02
#: Wake-ups after each request that are never held back (the head, the first event).
PROMPT_WAKES = 2
#: How a chunked HTTP/1.1 body ends (the last chunk, without trailers).
_LAST_CHUNK = b"\r\n0\r\n\r\n"
#: The delay before racing the next address of a host (RFC 8305), as anyio uses.
HAPPY_EYEBALLS_DELAY_S = 0.25

SocketOption = (
    tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]
)


class _Reader(asyncio.Protocol):
    """Queues what the transport reads and wakes the one reader waiting for it."""

    def __init__(self) -> None:
        self.chunks: deque[bytes] = deque()
        self.buffered = 0
        self.at_eof = False
        self.lost = False
        self.error: BaseException | None = None
        self.transport: asyncio.Transport | None = None
        self.paused = False
        self._waiter: asyncio.Future[None] | None = None
        self._drained: asyncio.Future[None] | None = None
        self._writing_paused = False
        #: Loop time of the last wake-up with data, and how many since the last request.
        self._woken_at = 0.0
        self._wakes = 0
        self._held: asyncio.TimerHandle | None = None
        self._tail = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self.buffered += len(data)
        if self.buffered > HIGH_WATER and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()
        # The end of a chunked body (every streamed reply ends so) is never held; it may
        # come in a segment of its own.
        tail = self._tail = (self._tail + data[-len(_LAST_CHUNK) :])[-len(_LAST_CHUNK) :]
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if tail == _LAST_CHUNK:
            self._wake()
            return
        if self._held is not None:
            return
        loop = asyncio.get_running_loop()
        due = self._woken_at + COALESCE_S
        if self._wakes >= PROMPT_WAKES and loop.time() < due:
            self._held = loop.call_at(due, self._release)
        else:
            self._wake()

    def request_sent(self) -> None:
        self._wakes = 0

    def _release(self) -> None:
        self._held = None
        self._wake()

    def eof_received(self) -> bool:
        self.at_eof = True
        self._wake()
        # The transport closes itself: an HTTP/1.1 server that ends its side is done with
        # the connection (and asyncio's TLS layer warns about keeping it half open).
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.error = exc
        self._wake()
        self._wake_writer()

    def pause_writing(self) -> None:
        self._writing_paused = True

    def resume_writing(self) -> None:
        self._writing_paused = False
        self._wake_writer()

    def _wake(self) -> None:
        _resolve(self._waiter)

    def _wake_writer(self) -> None:
        _resolve(self._drained)

    async def wait_readable(self, timeout: float | None) -> None:
        loop = asyncio.get_running_loop()
        self._waiter = loop.create_future()
        try:
            await _within(self._waiter, timeout)
        finally:
            self._waiter = None
            if self._held is not None:
                self._held.cancel()
                self._held = None
        self._woken_at = loop.time()
        self._wakes += 1

    async def wait_drained(self, timeout: float | None) -> None:
        if not self._writing_paused or self.lost:
            return
        self._drained = asyncio.get_running_loop().create_future()
        try:
            await _within(self._drained, timeout)
        finally:
            self._drained = None

    def take(self, max_bytes: int) -> bytes:
        """What has arrived, up to ``max_bytes``, in one piece."""
        chunks = self.chunks
        chunk = chunks.popleft()
        if chunks and len(chunk) < max_bytes:
            parts = [chunk]
            size = len(chunk)
            while chunks and size + len(chunks[0]) <= max_bytes:
                parts.append(chunks.popleft())
                size += len(parts[-1])
            chunk = b"".join(parts)
        if len(chunk) > max_bytes:
            chunk, rest = chunk[:max_bytes], chunk[max_bytes:]
            chunks.appendleft(rest)
        self.buffered -= len(chunk)
        if self.paused and self.buffered <= HIGH_WATER // 4 and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        return chunk


def _resolve(future: asyncio.Future[None] | None) -> None:
    if future is not None and not future.done():
        future.set_result(None)


async def _within(future: asyncio.Future[None], timeout: float | None) -> None:
    """Await ``future``; ``TimeoutError`` if it is not done within ``timeout`` seconds."""
    timer = None
    if timeout is not None:
        timer = asyncio.get_running_loop().call_later(timeout, _expire, future)
    try:
        await future
    finally:
        if timer is not None:
            timer.cancel()


def _expire(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_exception(TimeoutError())


class AsyncioStream(AsyncNetworkStream):
    """One connection: ``read`` returns what has arrived, waiting only when nothing has."""

    def __init__(self, transport: asyncio.Transport, reader: _Reader) -> None:
        self._transport = transport
        self._reader = reader
        self._closed = False

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        reader = self._reader
        if not reader.chunks:
            if self._closed:
                raise httpcore2.ReadError("the connection was closed")
            if not (reader.at_eof or reader.lost):
                try:
                    await reader.wait_readable(timeout)
                except TimeoutError as exc:
                    raise httpcore2.ReadTimeout(exc) from exc
            if not reader.chunks:
                if reader.error is not None:
                    raise httpcore2.ReadError(reader.error) from reader.error
                return b""
        return reader.take(max_bytes)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        reader = self._reader
        if self._closed or reader.lost or self._transport.is_closing():
            raise httpcore2.WriteError(reader.error or "the connection was closed")
        reader.request_sent()
        self._transport.write(buffer)
        try:
            await reader.wait_drained(timeout)
        except TimeoutError as exc:
            raise httpcore2.WriteTimeout(exc) from exc
        if reader.lost and reader.error is not None:
            raise httpcore2.WriteError(reader.error) from reader.error

    async def aclose(self) -> None:
        # Closed at once (Esc): the socket is shut down in this call, as the anyio backend
        # did, so the server sees it now; ``abort`` closes it a turn of the loop later.
        self._closed = True
        sock = self._transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self._transport.abort()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            transport = await loop.start_tls(
                self._transport,
                self._reader,
                ssl_context,
                server_hostname=server_hostname,
                ssl_handshake_timeout=timeout,
            )
        except TimeoutError as exc:
            self._transport.abort()
            raise httpcore2.ConnectTimeout(exc) from exc
        except (OSError, ssl.SSLError, ConnectionError) as exc:
            self._transport.abort()
            raise httpcore2.ConnectError(exc) from exc
        if transport is None:
            raise httpcore2.ConnectError("the connection closed during the TLS handshake")
        self._reader.transport = transport
        return AsyncioStream(transport, self._reader)

    def get_extra_info(self, info: str) -> Any:
        transport = self._transport
        if info == "ssl_object":
            return transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return transport.get_extra_info("sockname")
        if info == "server_addr":
            return transport.get_extra_info("peername")
        if info == "socket":
            return transport.get_extra_info("socket")
        if info == "is_readable":
            # The transport reads all the time, so a server's close or stray bytes on an
            # idle connection have usually been seen already; the socket is asked too.
            reader = self._reader
            if reader.chunks or reader.at_eof or reader.lost:
                return True
            return is_socket_readable(transport.get_extra_info("socket"))
        return None


class AsyncioBackend(AsyncNetworkBackend):
    """httpcore2's network backend on asyncio's transports (see the module's docstring)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        connecting = loop.create_connection(
            _Reader,
            host,
            port,
            local_addr=None if local_address is None else (local_address, 0),
            happy_eyeballs_delay=HAPPY_EYEBALLS_DELAY_S,
        )
        transport, reader = await _connect(connecting, timeout)
        _apply(transport, socket_options)
        return AsyncioStream(transport, reader)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        transport, reader = await _connect(loop.create_unix_connection(_Reader, path), timeout)
        _apply(transport, socket_options)
        return AsyncioStream(transport, reader)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


async def _connect(connecting: Any, timeout: float | None) -> tuple[asyncio.Transport, _Reader]:
    try:
        transport, reader = await asyncio.wait_for(connecting, timeout)
    except TimeoutError as exc:
        raise httpcore2.ConnectTimeout(exc) from exc
    except OSError as exc:
        raise httpcore2.ConnectError(exc) from exc
    return transport, reader


def _apply(transport: asyncio.Transport, options: Iterable[SocketOption] | None) -> None:
    sock: socket.socket | None = transport.get_extra_info("socket")
    if sock is None:
        return
    for option in options or ():
        sock.setsockopt(*option)


def use_asyncio_streams(sdk_client: Any) -> bool:
    """Give an SDK client's connection pools ``AsyncioBackend``; True if its direct pool
    took it (see ``pools_on_asyncio``)."""
    return pools_on_asyncio(getattr(sdk_client, "_client", None))


def pools_on_asyncio(http_client: Any) -> bool:
    """Give an httpx2 client's pools ``AsyncioBackend``: its transport's, and those of the
    proxies it took from the environment (``HTTPS_PROXY``…) when they are plain ``http://``
    proxies (a TLS proxy would want TLS inside TLS). True if the direct pool took it. A pool
    of another shape (a caller's own ``http_client``, another httpx2 layout) keeps the
    backend it has, which works the same, only slower."""
    mounts = getattr(http_client, "_mounts", None)
    for transport in mounts.values() if isinstance(mounts, dict) else ():
        _on_asyncio(transport)
    return _on_asyncio(getattr(http_client, "_transport", None))


def asyncio_transport(verify: ssl.SSLContext) -> httpx2.AsyncHTTPTransport:
    """An httpx2 transport (for a client built with ``transport=``) whose pool reads
    through ``AsyncioBackend``, where httpx2 still has the layout it was written for."""
    transport = httpx2.AsyncHTTPTransport(verify=verify)
    _on_asyncio(transport)
    return transport


def environment_proxy_mounts(verify: ssl.SSLContext) -> dict[str, Any]:
    """The transports httpx2 mounts for the proxies in the environment (``HTTPS_PROXY``,
    ``NO_PROXY``…), by its own rules, each on ``AsyncioBackend`` where it can be: for a
    client built with its own ``transport=``, for which httpx2 reads no proxy at all."""
    probe = httpx2.AsyncClient(verify=verify)  # builds its transports only: sends nothing
    mounts = {pattern.pattern: transport for pattern, transport in probe._mounts.items()}
    for transport in mounts.values():
        _on_asyncio(transport)
    return mounts


def _on_asyncio(transport: object) -> bool:
    pool = getattr(transport, "_pool", None)
    if type(pool) is httpcore2.AsyncHTTPProxy:
        proxy_url = getattr(pool, "_proxy_url", None)
        if getattr(proxy_url, "scheme", None) != b"http":
            return False
    elif type(pool) is not httpcore2.AsyncConnectionPool:
        return False
    if not hasattr(pool, "_network_backend") or pool.connections:
        return False
    pool._network_backend = AsyncioBackend()
    return True
