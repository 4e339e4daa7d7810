"""The SDK clients' sockets on asyncio's transports (``providers/_asyncio_net.py``).

First the backend alone against a server on the same loop (what a read returns, its
timeout, end of stream, a reset, closing, flow control, TLS, reads coalesced while a
response streams), then through the real SDKs: every provider's client reads through it,
over plain HTTP and over TLS, and keeps its connection between turns.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import struct
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpcore2
import pytest

from picode.ai.providers import _asyncio_net, _client_cache
from picode.ai.providers._asyncio_net import (
    HIGH_WATER,
    AsyncioBackend,
    asyncio_transport,
    pools_on_asyncio,
    use_asyncio_streams,
)
from tests.providers.models import wire_model
from tests.providers.sdk_streaming import TIMEOUT_S, run, simple_context, stream_all
from tests.wire.anthropic_protocol import AnthropicStream
from tests.wire.chat_protocol import ChatStream
from tests.wire.gemini_protocol import GeminiStream
from tests.wire.gemini_protocol import text as gemini_text
from tests.wire.proxy import RelayProxy
from tests.wire.responses_protocol import ResponsesStream, usage
from tests.wire.server import WireResponse, WireServer
from tests.wire.tls import local_tls

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def serving(handler: Handler, tls: ssl.SSLContext | None = None) -> AsyncIterator[int]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0, ssl=tls)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()


def on_loop(body: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(body(), TIMEOUT_S))


def test_a_read_returns_what_has_arrived_up_to_max_bytes() -> None:
    async def body() -> None:
        sent = asyncio.Event()

        async def handler(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(b"hello world")
            await writer.drain()
            sent.set()
            await asyncio.sleep(TIMEOUT_S)

        async with serving(handler) as port:
            stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
            await sent.wait()
            first = await stream.read(5, timeout=5)
            rest = b""
            while len(first) + len(rest) < 11:
                rest += await stream.read(1024, timeout=5)
            assert (first, rest) == (b"hello", b" world")
            await stream.aclose()

    on_loop(body)


def test_a_read_with_nothing_to_read_times_out_and_the_stream_goes_on() -> None:
    async def body() -> None:
        go = asyncio.Event()

        async def handler(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await go.wait()
            writer.write(b"late")
            await writer.drain()
            await asyncio.sleep(TIMEOUT_S)

        async with serving(handler) as port:
            stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
            with pytest.raises(httpcore2.ReadTimeout):
                await stream.read(1024, timeout=0.05)
            go.set()
            assert await stream.read(1024, timeout=5) == b"late"
            await stream.aclose()

    on_loop(body)


def test_the_end_of_the_stream_reads_empty_and_is_readable() -> None:
    async def body() -> None:
        async def handler(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(b"bye")
            writer.close()

        async with serving(handler) as port:
            stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
            received = b""
            while (data := await stream.read(1024, timeout=5)) != b"":
                received += data
            assert received == b"bye"
            # What the pool asks of an idle connection before it reuses one.
            assert stream.get_extra_info("is_readable") is True
            await stream.aclose()

    on_loop(body)


def test_a_reset_connection_raises_read_error() -> None:
    async def body() -> None:
        async def handler(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            # Linger 0: close sends a reset, not an end of stream.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()

        async with serving(handler) as port:
            stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
            with pytest.raises(httpcore2.ReadError):
                await stream.read(1024, timeout=5)
            await stream.aclose()

    on_loop(body)


def test_closing_frees_the_connection_at_once_and_later_calls_fail() -> None:
    async def body() -> None:
        closed = asyncio.Event()

        async def handler(reader: asyncio.StreamReader, _writer: asyncio.StreamWriter) -> None:
            await reader.read()  # returns at the client's close
            closed.set()

        async with serving(handler) as port:
            stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
            idle = stream.get_extra_info("is_readable")
            await stream.aclose()
            await asyncio.wait_for(closed.wait(), 5)
            with pytest.raises(httpcore2.ReadError):
                await stream.read(1024)
            with pytest.raises(httpcore2.WriteError):
                await stream.write(b"x")
            assert idle is False

    on_loop(body)


def test_closing_shuts_the_socket_down_in_the_call_not_a_turn_of_the_loop_later() -> None:
    # What Esc measures: the server sees the close while the loop is still busy with the
    # abort. The loop is blocked here until the server has seen it (or 5 s have passed).
    listener = socket.create_server(("127.0.0.1", 0))
    seen = threading.Event()

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            if conn.recv(1024) == b"":
                seen.set()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()

    async def body() -> None:
        port = listener.getsockname()[1]
        stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
        await stream.aclose()
        assert seen.wait(5)  # blocking: no turn of the loop happens meanwhile

    try:
        on_loop(body)
    finally:
        listener.close()
        thread.join(5)


def test_a_refused_connection_raises_connect_error() -> None:
    async def body() -> None:
        with socket.socket() as unused:
            unused.bind(("127.0.0.1", 0))
            port = unused.getsockname()[1]
        with pytest.raises(httpcore2.ConnectError):
            await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)

    on_loop(body)


def test_a_reader_that_falls_behind_pauses_the_socket_and_loses_nothing() -> None:
    total = 8 * HIGH_WATER

    async def body() -> None:
        async def handler(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            for index in range(total // 4096):
                writer.write(bytes([index % 251]) * 4096)
                await writer.drain()
            writer.close()

        async with serving(handler) as port:
            stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
            reader = stream._reader  # type: ignore[attr-defined]
            await _until(lambda: reader.paused)
            # Paused: what waits unread is bounded, the rest stays with the sender.
            assert reader.buffered <= HIGH_WATER + 256 * 1024
            received = bytearray()
            while (data := await stream.read(65536, timeout=5)) != b"":
                received += data
            expected = b"".join(bytes([i % 251]) * 4096 for i in range(total // 4096))
            assert received == expected
            assert not reader.paused
            await stream.aclose()

    on_loop(body)


def test_a_write_the_peer_never_reads_times_out() -> None:
    async def body() -> None:
        async def handler(_reader: asyncio.StreamReader, _writer: asyncio.StreamWriter) -> None:
            await asyncio.sleep(TIMEOUT_S)  # never reads

        async with serving(handler) as port:
            stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
            with pytest.raises(httpcore2.WriteTimeout):
                await _write_until_stuck(stream)
            await stream.aclose()

    on_loop(body)


def test_tls_is_negotiated_with_alpn_and_reads_through(tmp_path: Path) -> None:
    server_tls, ca_file = local_tls(tmp_path)
    server_tls.set_alpn_protocols(["http/1.1"])

    async def body() -> None:
        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write((await reader.readexactly(4)).upper())
            await writer.drain()
            await asyncio.sleep(TIMEOUT_S)

        async with serving(handler, server_tls) as port:
            plain = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
            client_tls = ssl.create_default_context(cafile=str(ca_file))
            client_tls.set_alpn_protocols(["http/1.1"])
            stream = await plain.start_tls(client_tls, server_hostname="127.0.0.1", timeout=5)
            ssl_object = stream.get_extra_info("ssl_object")
            assert ssl_object is not None
            assert ssl_object.selected_alpn_protocol() == "http/1.1"
            await stream.write(b"ping", timeout=5)
            assert await stream.read(1024, timeout=5) == b"PING"
            await stream.aclose()

    on_loop(body)


def test_a_tls_server_closing_reads_as_the_end_of_the_stream(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server_tls, ca_file = local_tls(tmp_path)

    async def body() -> None:
        async def handler(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(b"last words")
            await writer.drain()
            writer.close()

        async with serving(handler, server_tls) as port:
            plain = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
            client_tls = ssl.create_default_context(cafile=str(ca_file))
            stream = await plain.start_tls(client_tls, server_hostname="127.0.0.1", timeout=5)
            received = b""
            while (data := await stream.read(1024, timeout=5)) != b"":
                received += data
            assert received == b"last words"
            assert stream.get_extra_info("is_readable") is True
            with pytest.raises(httpcore2.WriteError):
                await stream.write(b"more", timeout=5)
            await stream.aclose()

    with caplog.at_level("WARNING", logger="asyncio"):
        on_loop(body)
    assert not [record for record in caplog.records if record.name == "asyncio"]


def test_a_certificate_the_client_does_not_trust_fails_to_connect(tmp_path: Path) -> None:
    server_tls, _ca_file = local_tls(tmp_path)

    async def body() -> None:
        async def handler(_reader: asyncio.StreamReader, _writer: asyncio.StreamWriter) -> None:
            await asyncio.sleep(TIMEOUT_S)

        async with serving(handler, server_tls) as port:
            plain = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
            with pytest.raises(httpcore2.ConnectError):
                await plain.start_tls(
                    ssl.create_default_context(), server_hostname="127.0.0.1", timeout=5
                )

    on_loop(body)


def test_a_streaming_reader_is_woken_at_most_once_per_coalescing_interval() -> None:
    pieces = 120

    async def body() -> None:
        async def handler(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            for index in range(pieces):
                writer.write(b"%03d;" % index)
                await writer.drain()
                await asyncio.sleep(0.002)
            writer.close()

        async with serving(handler) as port:
            stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
            reader = stream._reader  # type: ignore[attr-defined]
            wakes = 0
            original = reader.wait_readable

            async def counted(timeout: float | None) -> None:
                nonlocal wakes
                await original(timeout)
                wakes += 1

            reader.wait_readable = counted
            await stream.write(b"go", timeout=5)
            started = asyncio.get_running_loop().time()
            received = b""
            while (data := await stream.read(65536, timeout=5)) != b"":
                received += data
            elapsed = asyncio.get_running_loop().time() - started
            assert received == b"".join(b"%03d;" % index for index in range(pieces))
            # Never two wake-ups closer than the interval after the prompt ones (the end of
            # the stream wakes at once); one wake-up per piece without coalescing.
            assert wakes <= elapsed / _asyncio_net.COALESCE_S + _asyncio_net.PROMPT_WAKES + 2
            assert wakes < pieces / 2
            await stream.aclose()

    on_loop(body)


@pytest.fixture
def long_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    """A hold far longer than any test waits: a held read cannot end by its timer."""
    monkeypatch.setattr(_asyncio_net, "COALESCE_S", 60.0)


class Pieces:
    """A server that writes one piece each time the test asks."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()

    async def handler(self, _reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (piece := await self.queue.get()) is not None:
            writer.write(piece)
            await writer.drain()
        writer.close()


@pytest.mark.usefixtures("long_hold")
def test_the_first_wake_ups_after_a_request_and_the_end_of_a_body_are_not_held() -> None:
    async def body() -> None:
        server = Pieces()
        async with serving(server.handler) as port:
            stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
            for _ in range(2):
                await stream.write(b"request", timeout=5)
                for piece in (b"head", b"first"):  # PROMPT_WAKES of them
                    await server.queue.put(piece)
                    assert await asyncio.wait_for(stream.read(1024), 5) == piece
                await server.queue.put(b"later")
                held = asyncio.ensure_future(stream.read(1024))
                done, _ = await asyncio.wait({held}, timeout=0.3)
                assert not done  # held: the next wake-up is a minute away
                await server.queue.put(b"\r\n0\r\n\r\n")
                assert await asyncio.wait_for(held, 5) == b"later\r\n0\r\n\r\n"
            await stream.aclose()

    on_loop(body)


@pytest.mark.usefixtures("long_hold")
def test_a_lost_connection_wakes_a_held_reader_at_once() -> None:
    async def body() -> None:
        server = Pieces()
        async with serving(server.handler) as port:
            stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
            for piece in (b"head", b"first"):
                await server.queue.put(piece)
                await asyncio.wait_for(stream.read(1024), 5)
            await server.queue.put(b"last")
            held = asyncio.ensure_future(stream.read(1024))
            done, _ = await asyncio.wait({held}, timeout=0.3)
            assert not done
            await server.queue.put(None)  # the server closes
            assert await asyncio.wait_for(held, 5) == b"last"
            assert await asyncio.wait_for(stream.read(1024), 5) == b""
            await stream.aclose()

    on_loop(body)


async def _write_until_stuck(stream: httpcore2.AsyncNetworkStream) -> None:
    for _ in range(1000):  # the kernel's buffers fill long before
        await stream.write(b"x" * (1 << 20), timeout=0.2)


async def _until(condition: Callable[[], bool]) -> None:
    while not condition():
        await asyncio.sleep(0.001)


# --- through the SDKs ---------------------------------------------------------------------


def _reply(api: str, text: str) -> WireResponse:
    if api == "anthropic-messages":
        return AnthropicStream().text(*text.split(" ")).stop().response()
    if api == "openai-completions":
        return ChatStream().text(*text.split(" ")).end("stop").response()
    if api == "openai-responses":
        return (
            ResponsesStream().created().message(text.split(" ")).completed(usage(5, 3)).response()
        )
    first, second = text.split(" ")
    stream = GeminiStream().chunk(gemini_text(first))
    return stream.chunk(gemini_text(second), finish="STOP").response()


APIS = ["anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai"]


def _server_tls(tls: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The wire server's TLS setup when ``tls``, its CA trusted by the SDKs (else None)."""
    if not tls:
        return None
    server_tls, ca_file = local_tls(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
    return server_tls


def _two_turns(
    api: str, wire: WireServer, pools: Callable[[Any], list[Any]]
) -> tuple[list[str], list[type]]:
    """Two replies through picode's provider for ``api``; their texts, and the network
    backends of the pools ``pools`` picks from each cached SDK client."""
    wire.enqueue(_reply(api, "one two"), _reply(api, "three four"))
    model = wire_model(api, wire, reasoning=False)

    async def turns() -> tuple[list[str], list[type]]:
        texts = []
        for _ in range(2):
            outcome = await stream_all(model, simple_context())
            assert outcome.message.stop_reason == "stop", outcome.message.error_message
            texts.append(outcome.deltas(0))
        clients = _client_cache._clients[asyncio.get_running_loop()].values()
        backends = [
            type(pool._network_backend) for client, _close in clients for pool in pools(client)
        ]
        return texts, backends

    return run(turns)


@pytest.mark.parametrize("tls", [False, True], ids=["http", "https"])
@pytest.mark.parametrize("api", APIS)
def test_each_sdk_client_reads_through_asyncio_and_keeps_its_connection(
    api: str, tls: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with WireServer(tls=_server_tls(tls, tmp_path, monkeypatch)) as wire:
        texts, backends = _two_turns(api, wire, lambda client: [_pool(client)])
        assert wire.url.startswith("https:" if tls else "http:")
        assert texts == ["onetwo", "threefour"]
        assert backends == [AsyncioBackend]
        assert wire.connection_count == 1


@pytest.mark.parametrize("tls", [False, True], ids=["http", "https"])
@pytest.mark.parametrize("api", APIS)
def test_through_a_proxy_from_the_environment_each_sdk_reads_through_asyncio(
    api: str, tls: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``HTTPS_PROXY``/``HTTP_PROXY`` give the SDK's httpx client a pool per proxy: those
    read through asyncio too (a CONNECT tunnel with TLS inside, or plain forwarding); and
    google-genai's client, given a transport of its own, still goes through the proxy."""
    server_tls = _server_tls(tls, tmp_path, monkeypatch)
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    with WireServer(tls=server_tls) as wire, RelayProxy() as proxy:
        for name in ("HTTP_PROXY", "HTTPS_PROXY"):
            monkeypatch.setenv(name, proxy.url)

        def proxied(client: Any) -> list[Any]:
            mounted = _http_client(client)._mounts.values()
            return [transport._pool for transport in mounted if transport is not None]

        texts, backends = _two_turns(api, wire, proxied)
        assert texts == ["onetwo", "threefour"] and len(wire.requests) == 2
        # Through the proxy. (Whether the second turn reused the connection depends on the
        # SDK's 0.1 s drain racing the relay's threads: checked without a proxy, above.)
        host = wire.url.split("://")[1]
        came = f"CONNECT {host} " if tls else f"POST {wire.url}/"
        assert proxy.first_lines and all(line.startswith(came) for line in proxy.first_lines)
        assert backends and set(backends) == {AsyncioBackend}


def test_a_tls_proxy_keeps_the_backend_it_has(monkeypatch: pytest.MonkeyPatch) -> None:
    """TLS to the proxy and TLS to the server inside it: left to httpx2's own backend."""
    import httpx2

    monkeypatch.setenv("HTTPS_PROXY", "https://127.0.0.1:9")
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    client = httpx2.AsyncClient()
    assert pools_on_asyncio(client) is True  # the direct pool
    [proxied] = [t for t in client._mounts.values() if t is not None]
    assert type(proxied._pool._network_backend) is not AsyncioBackend  # type: ignore[attr-defined]


def _http_client(sdk_client: object) -> Any:
    # google-genai's client keeps its httpx2 client elsewhere than the other SDKs.
    return getattr(sdk_client, "_async_httpx_client", None) or sdk_client._client  # type: ignore[attr-defined]


def _pool(sdk_client: object) -> httpcore2.AsyncConnectionPool:
    pool = _http_client(sdk_client)._transport._pool
    assert isinstance(pool, httpcore2.AsyncConnectionPool)
    return pool


def test_a_client_whose_pool_is_not_the_expected_shape_keeps_its_backend() -> None:
    class Elsewhere:
        _client = object()

    assert use_asyncio_streams(Elsewhere()) is False


def test_a_transport_for_a_client_built_with_one_reads_through_asyncio() -> None:
    transport = asyncio_transport(ssl.create_default_context())
    assert type(transport._pool._network_backend) is AsyncioBackend
