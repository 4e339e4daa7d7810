"""Which protocol revision picode speaks: a server that speaks only 2026-07-28 (stateless
HTTP, no ``initialize`` handshake) is used through ``server/discover``; servers that speak
the handshake keep it (the elicitation, list-changed and cancellation tests prove that)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.ai.types import ToolResultMessage
from picode.session.config.settings import McpServer
from picode.session.mcp.negotiate import negotiate
from tests.session.conftest import SessionHarness, run
from tests.session.mcp.conftest import free_port, recorded, settings_with, start_http, stop_http


def test_a_server_that_speaks_only_2026_07_28_is_used(
    harness: SessionHarness, record: Path
) -> None:
    port = free_port()
    server = start_http(port, record, mode="modern")
    url = f"http://127.0.0.1:{port}/mcp"

    async def scenario() -> None:
        call = FauxToolCall("mcp__files__echo", {"text": "stateless"})
        faux = harness.faux(tool_turn(call), text_turn("ok"))
        session = await harness.open(faux, settings=settings_with(files=McpServer(url=url)))
        await session.wait_for_mcp()
        [status] = session.mcp_servers()
        assert (status.state, status.error) == ("ready", None), status
        assert "mcp__files__echo" in status.tools
        # What the server offers came from its discover result: prompts and resources too.
        assert [p.command for p in session.mcp_prompts()] == ["mcp__files__review"]
        assert [r.mention for r in session.mcp_resources()] == ["@files:notes://today"]
        await session.prompt("use the stateless server")
        [result] = [m for m in session.messages if isinstance(m, ToolResultMessage)]
        assert (result.is_error, result.text) == (False, "echo: stateless")
        assert "echo stateless" in recorded(record)
        await session.close()

    try:
        run(scenario(), timeout=60)
    finally:
        stop_http(server)


async def _negotiated(url: str) -> tuple[str | None, bool, bool]:
    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write) as session,
    ):
        with anyio.fail_after(20):
            offers = await negotiate(session)
        assert offers == session.server_capabilities
        return (
            session.protocol_version,
            session.initialize_result is not None,
            session.discover_result is not None,
        )


def test_the_handshake_comes_first_and_discover_only_when_it_is_refused(
    record: Path, http_server: str
) -> None:
    port = free_port()
    modern = start_http(port, record, mode="modern")
    try:
        both = anyio.run(_negotiated, http_server)
        only_2026 = anyio.run(_negotiated, f"http://127.0.0.1:{port}/mcp")
    finally:
        stop_http(modern)
    assert both[1:] == (True, False) and both[0] != "2026-07-28"
    assert only_2026 == ("2026-07-28", False, True)


class FakeRefusingSession:
    """A session whose server refuses both the handshake and ``server/discover``."""

    server_capabilities: types.ServerCapabilities | None = None

    async def initialize(self) -> None:
        raise MCPError(code=-32601, message="handshake refused")

    async def discover(self) -> None:
        raise MCPError(code=-32601, message="discover refused")


def test_a_server_that_refuses_both_reports_the_handshake_error() -> None:
    with pytest.raises(MCPError) as refused:
        anyio.run(negotiate, FakeRefusingSession())  # type: ignore[arg-type]
    assert refused.value.error.code == -32601
    assert "handshake" in refused.value.error.message
