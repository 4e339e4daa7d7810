"""MCP test servers (tests/session/mcp/server.py) configured for a session."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from picode.session.config.settings import McpServer, McpSettings, Settings
from picode.session.events import McpServersChanged
from picode.session.mcp.status import McpServerStatus

SERVER = Path(__file__).with_name("server.py")


def stdio_server(record: Path, *extra: str, **config: Any) -> McpServer:
    return McpServer(
        command=sys.executable,
        args=[str(SERVER), "stdio", *extra],
        env={"MCP_TEST_RECORD": str(record)},
        **config,
    )


def settings_with(**servers: McpServer) -> Settings:
    return Settings(mcp=McpSettings(servers=servers))


def recorded(record: Path) -> list[str]:
    try:
        return record.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []


async def wait_recorded(record: Path, line: str, timeout: float = 10.0) -> None:
    """Until the server has written ``line`` (it runs in another process: nothing to await)."""

    async def poll() -> None:
        while line not in recorded(record):
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), timeout)


async def wait_recorded_prefix(record: Path, prefix: str, timeout: float = 10.0) -> None:
    async def poll() -> None:
        while not any(line.startswith(prefix) for line in recorded(record)):
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), timeout)


class FakeMcpListener:
    """Stands in for a session subscriber: collects McpServersChanged events; waits for a
    server state."""

    def __init__(self) -> None:
        self.seen: list[list[McpServerStatus]] = []
        self._changed = asyncio.Event()

    def __call__(self, event: Any) -> None:
        if isinstance(event, McpServersChanged):
            self.seen.append(event.servers)
            self._changed.set()

    async def until(self, name: str, state: str, timeout: float = 15.0) -> McpServerStatus:
        async def wait() -> McpServerStatus:
            while True:
                for servers in self.seen:
                    for status in servers:
                        if status.name == name and status.state == state:
                            return status
                self._changed.clear()
                await self._changed.wait()

        return await asyncio.wait_for(wait(), timeout)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def record(tmp_path: Path) -> Path:
    return tmp_path / "server-record.txt"


def start_http(port: int, record: Path, mode: str = "http") -> subprocess.Popen[bytes]:
    """A streamable-HTTP (or ``mode="sse"``) MCP server on 127.0.0.1:``port``, once it
    accepts connections."""
    process = subprocess.Popen(
        [sys.executable, str(SERVER), mode, str(port)],
        env={**os.environ, "MCP_TEST_RECORD": str(record)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_listening(port, process)
    except BaseException:
        process.kill()
        process.wait(10)
        raise
    return process


def stop_http(process: subprocess.Popen[bytes]) -> None:
    process.kill()
    process.wait(10)


@pytest.fixture
def http_server(record: Path) -> Iterator[str]:
    """The URL of a streamable-HTTP MCP server on 127.0.0.1."""
    port = free_port()
    process = start_http(port, record)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_http(process)


def _wait_listening(port: int, process: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the test server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            # Nothing to wait on across processes but the port itself.
            time.sleep(0.05)
    raise TimeoutError(f"the test server did not listen on {port} within {timeout} s")
