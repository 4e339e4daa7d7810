"""MCP servers through AgentSession: real servers over stdio and streamable HTTP, the
scripted provider calling their tools."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.ai.types import ImageContent, ToolResultMessage
from picode.session.agent_session import AgentSession
from picode.session.config.settings import McpServer, load_config
from picode.session.mcp.content import MAX_LINES
from picode.session.safety.approval import ApprovalDecision, ApprovalRequest
from tests.session.conftest import SessionHarness, run
from tests.session.mcp.conftest import (
    FakeMcpListener,
    free_port,
    recorded,
    settings_with,
    start_http,
    stdio_server,
    stop_http,
    wait_recorded,
    wait_recorded_prefix,
)


def results(session: AgentSession) -> list[ToolResultMessage]:
    return [m for m in session.messages if isinstance(m, ToolResultMessage)]


def call(tool: str, **arguments: object) -> object:
    return tool_turn(FauxToolCall(f"mcp__files__{tool}", dict(arguments)))


def test_tools_are_listed_and_called_through_the_agent(
    harness: SessionHarness, record: Path
) -> None:
    async def scenario() -> None:
        faux = harness.faux(call("echo", text="hi"), text_turn("done"))
        settings = settings_with(files=stdio_server(record))
        session = await harness.open(faux, settings=settings)
        await session.wait_for_mcp()
        [status] = session.mcp_servers()
        assert status.state == "ready"
        assert "mcp__files__echo" in status.tools
        tool = session.tool("mcp__files__echo")
        assert tool is not None
        assert tool.description == "Repeat the text."
        assert tool.parameters["required"] == ["text"]
        await session.prompt("say hi through the server")
        assert "mcp__files__echo" in faux.requests[0].tool_names
        [result] = results(session)
        assert result.text == "echo: hi"
        assert not result.is_error
        assert "echo hi" in recorded(record)
        await session.close()

    run(scenario(), timeout=60)


def test_images_resources_errors_and_long_output(harness: SessionHarness, record: Path) -> None:
    async def scenario() -> Path:
        faux = harness.faux(
            call("picture"),
            call("link"),
            call("broken"),
            call("big", lines=MAX_LINES + 500),
            text_turn("done"),
        )
        session = await harness.open(faux, settings=settings_with(files=stdio_server(record)))
        await session.wait_for_mcp()
        await session.prompt("use them all")
        picture, link, broken, big = results(session)
        assert picture.text == "a pixel"
        [image] = [b for b in picture.content if isinstance(b, ImageContent)]
        assert image.mime_type == "image/png" and image.data_base64
        assert "[resource link: notes <file:///notes.md> (text/markdown)]" in link.text
        assert "[resource <file:///todo.txt>]\nbuy milk" in link.text
        assert broken.is_error and "the disk is on fire" in broken.text
        assert not big.is_error
        assert big.details["truncated"] is True
        assert f"line {MAX_LINES + 500}" not in big.text
        assert big.text.startswith("line 1\n")
        await session.close()
        return Path(big.details["full_output_path"])

    full = run(scenario(), timeout=60)
    assert full.read_text(encoding="utf-8").endswith(f"line {MAX_LINES + 500}")
    full.unlink()


def test_a_server_that_dies_reports_it_and_the_next_call_starts_it_again(
    harness: SessionHarness, record: Path
) -> None:
    async def scenario() -> None:
        faux = harness.faux(call("crash"), text_turn("it crashed"), call("echo", text="again"))
        session = await harness.open(faux, settings=settings_with(files=stdio_server(record)))
        watch = FakeMcpListener()
        session.subscribe(watch)
        await session.wait_for_mcp()
        await session.prompt("crash it")
        [crashed] = results(session)
        assert crashed.is_error
        assert "MCP server 'files' disconnected during crash" in crashed.text
        gone = await watch.until("files", "disconnected")
        assert gone.error == "the server closed the connection"
        # Its tools stay offered: calling one reconnects.
        assert session.tool("mcp__files__echo") is not None
        await session.prompt("try again")
        assert results(session)[-1].text == "echo: again"
        assert session.mcp_servers()[0].state == "ready"
        assert len([line for line in recorded(record) if line.startswith("started")]) == 2
        await session.close()

    run(scenario(), timeout=60)


def test_a_call_right_after_the_server_died_starts_it_again(
    harness: SessionHarness, record: Path
) -> None:
    # No pause between the two calls: the dead server's streams are still closing when the
    # second call comes, and it must restart the server, not report it as "ready".
    async def scenario() -> None:
        faux = harness.faux(call("crash"), call("echo", text="again"), text_turn("done"))
        session = await harness.open(faux, settings=settings_with(files=stdio_server(record)))
        await session.wait_for_mcp()
        await session.prompt("crash it, then echo")
        crashed, echoed = results(session)
        assert crashed.is_error
        assert not echoed.is_error, echoed.text
        assert echoed.text == "echo: again"
        assert len([line for line in recorded(record) if line.startswith("started")]) == 2
        await session.close()
        assert session.mcp_servers()[0].state != "ready"  # nothing is ready after close

    run(scenario(), timeout=60)


def test_a_call_past_timeout_s_fails_and_the_server_is_told(
    harness: SessionHarness, record: Path
) -> None:
    async def scenario() -> None:
        faux = harness.faux(call("hang"), text_turn("too slow"))
        # timeout_s also bounds the connection: long enough for a loaded machine to start
        # the server, short enough to keep the test quick.
        settings = settings_with(files=stdio_server(record, timeout_s=10))
        session = await harness.open(faux, settings=settings)
        await session.wait_for_mcp()
        assert session.mcp_servers()[0].state == "ready"
        await session.prompt("wait forever")
        [result] = results(session)
        assert result.is_error
        assert "did not answer hang within 10 s (timeout_s)" in result.text
        await wait_recorded(record, "hang cancelled")
        assert session.mcp_servers()[0].state == "ready"
        await session.close()

    run(scenario(), timeout=60)


def test_a_server_that_never_answers_is_shown_as_timed_out(
    harness: SessionHarness, record: Path
) -> None:
    async def scenario() -> None:
        faux = harness.faux(text_turn("fine without it"))
        settings = settings_with(files=stdio_server(record, "--slow-start", timeout_s=1.0))
        session = await harness.open(faux, settings=settings)
        # The prompt needs no MCP tool: it does not wait for the server.
        await session.prompt("hello")
        assert session.messages[-1].text == "fine without it"  # type: ignore[union-attr]
        await session.wait_for_mcp()
        [status] = session.mcp_servers()
        assert status.state == "timed_out"
        assert status.error == "no answer within 1 s"
        assert status.summary == "timed out: no answer within 1 s"
        assert session.tool("mcp__files__echo") is None
        await session.close()

    run(scenario(), timeout=60)


def test_closing_while_a_server_is_still_connecting_stops_it(
    harness: SessionHarness, record: Path
) -> None:
    async def scenario() -> int:
        faux = harness.faux(text_turn("ok"))
        settings = settings_with(files=stdio_server(record, "--slow-start", timeout_s=600))
        session = await harness.open(faux, settings=settings)
        await wait_recorded_prefix(record, "started")
        started = [line for line in recorded(record) if line.startswith("started")]
        await session.close()
        return int(started[0].split()[1])

    pid = run(scenario(), timeout=30)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_server_that_cannot_start_is_failed_with_the_reason(harness: SessionHarness) -> None:
    async def scenario() -> None:
        faux = harness.faux(text_turn("ok"))
        missing = McpServer(command="picode-no-such-mcp-server")
        session = await harness.open(faux, settings=settings_with(gone=missing))
        await session.wait_for_mcp()
        [status] = session.mcp_servers()
        assert status.state == "failed"
        assert status.error is not None and "picode-no-such-mcp-server" in status.error
        await session.close()

    run(scenario(), timeout=30)


def test_escape_while_a_tool_runs_returns_at_once_and_cancels_on_the_server(
    harness: SessionHarness, record: Path
) -> None:
    async def scenario() -> None:
        faux = harness.faux(call("hang"), text_turn("never sent"))
        session = await harness.open(faux, settings=settings_with(files=stdio_server(record)))
        await session.wait_for_mcp()
        prompt = asyncio.ensure_future(session.prompt("wait"))
        await wait_recorded(record, "hang started")
        session.abort()
        await asyncio.wait_for(prompt, 5)
        [result] = results(session)
        assert result.is_error and result.text.startswith("Aborted")
        await wait_recorded(record, "hang cancelled")
        # The transcript stays valid: every call has its result.
        calls = [c.id for m in session.messages for c in getattr(m, "tool_calls", [])]
        assert calls == [result.tool_call_id]
        await session.close()

    run(scenario(), timeout=60)


def test_list_changed_refreshes_the_tools(harness: SessionHarness, record: Path) -> None:
    async def scenario() -> None:
        faux = harness.faux(call("grow"), text_turn("grown"), call("extra"), text_turn("ok"))
        session = await harness.open(faux, settings=settings_with(files=stdio_server(record)))
        watch = FakeMcpListener()
        session.subscribe(watch)
        await session.wait_for_mcp()
        assert session.tool("mcp__files__extra") is None
        await session.prompt("grow")

        async def offered() -> None:
            while session.tool("mcp__files__extra") is None:
                watch._changed.clear()
                await watch._changed.wait()

        await asyncio.wait_for(offered(), 10)
        assert "mcp__files__extra" in session.mcp_servers()[0].tools
        await session.prompt("use the new one")
        assert results(session)[-1].text == "extra here"
        await session.close()

    run(scenario(), timeout=60)


def test_allow_and_deny_lists_choose_the_tools(harness: SessionHarness, record: Path) -> None:
    async def scenario() -> None:
        faux = harness.faux(text_turn("ok"))
        server = stdio_server(record, tools={"allow": ["echo", "big", "hang"], "deny": ["hang"]})
        session = await harness.open(faux, settings=settings_with(files=server))
        await session.wait_for_mcp()
        assert session.mcp_servers()[0].tools == ("mcp__files__echo", "mcp__files__big")
        assert session.tool("mcp__files__crash") is None
        await session.close()

    run(scenario(), timeout=60)


def test_mcp_tools_are_asked_about_under_approval_all_unless_approved(
    harness: SessionHarness, record: Path
) -> None:
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision("no", "not now")

    async def scenario() -> None:
        faux = harness.faux(call("echo", text="ask me"), call("big", lines=1), text_turn("done"))
        server = stdio_server(record, tools={"approved": ["big"]})
        session = await harness.open(
            faux, settings=settings_with(files=server), approver=approver, approval="all"
        )
        await session.wait_for_mcp()
        await session.prompt("go")
        echo, big = results(session)
        assert [r.tool_name for r in asked] == ["mcp__files__echo"]
        assert '"text": "ask me"' in asked[0].preview
        assert echo.is_error and "denied" in echo.text
        assert big.text == "line 1"
        assert "echo ask me" not in recorded(record)
        await session.close()

    run(scenario(), timeout=60)


def test_streamable_http_server(harness: SessionHarness, http_server: str) -> None:
    async def scenario() -> None:
        faux = harness.faux(call("echo", text="over http"), call("picture"), text_turn("ok"))
        session = await harness.open(faux, settings=settings_with(files=McpServer(url=http_server)))
        await session.wait_for_mcp()
        [status] = session.mcp_servers()
        assert (status.state, status.transport) == ("ready", "http"), status
        await session.prompt("use http")
        echo, picture = results(session)
        assert echo.text == "echo: over http"
        assert any(isinstance(b, ImageContent) for b in picture.content)
        await session.close()

    run(scenario(), timeout=60)


def test_a_server_sent_events_server(harness: SessionHarness, record: Path) -> None:
    port = free_port()
    server = start_http(port, record, mode="sse")

    async def scenario() -> None:
        faux = harness.faux(call("echo", text="over sse"), text_turn("ok"))
        config = McpServer(url=f"http://127.0.0.1:{port}/sse", transport="sse")
        session = await harness.open(faux, settings=settings_with(files=config))
        await session.wait_for_mcp()
        [status] = session.mcp_servers()
        assert (status.state, status.transport) == ("ready", "sse"), status
        await session.prompt("use sse")
        assert results(session)[-1].text == "echo: over sse"
        await session.close()

    try:
        run(scenario(), timeout=60)
    finally:
        stop_http(server)


def test_an_http_server_that_goes_away_is_reported_and_found_again(
    harness: SessionHarness, record: Path
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    server = start_http(port, record)

    async def scenario() -> None:
        nonlocal server
        faux = harness.faux(
            call("echo", text="one"),
            text_turn("1"),
            call("echo", text="two"),
            text_turn("2"),
            call("echo", text="three"),
            text_turn("3"),
        )
        session = await harness.open(faux, settings=settings_with(files=McpServer(url=url)))
        watch = FakeMcpListener()
        session.subscribe(watch)
        await session.wait_for_mcp()
        await session.prompt("first")
        assert results(session)[-1].text == "echo: one"
        await asyncio.to_thread(stop_http, server)
        await session.prompt("second")
        lost = results(session)[-1]
        assert lost.is_error
        assert "MCP server 'files'" in lost.text and "the next call starts it again" in lost.text
        await watch.until("files", "disconnected")
        server = await asyncio.to_thread(start_http, port, record)
        await session.prompt("third")
        assert results(session)[-1].text == "echo: three"
        await session.close()

    try:
        run(scenario(), timeout=60)
    finally:
        stop_http(server)


def test_an_untrusted_projects_server_is_never_started(
    harness: SessionHarness, record: Path
) -> None:
    folder = harness.cwd / ".picode"
    folder.mkdir()
    server = stdio_server(record)
    (folder / "config.toml").write_text(
        "[mcp.servers.repo]\n"
        f"command = {str(server.command)!r}\n"
        f"args = {server.args!r}\n"
        f"env = {{ MCP_TEST_RECORD = {str(record)!r} }}\n",
        encoding="utf-8",
    )

    async def scenario(trusted: bool) -> list[str]:
        loaded = load_config(harness.paths, harness.cwd, project_trusted=trusted)
        faux = harness.faux(text_turn("ok"))
        session = await harness.open(faux, settings=loaded.settings, project_trusted=trusted)
        await session.wait_for_mcp()
        states = [status.state for status in session.mcp_servers()]
        await session.close()
        return states

    assert run(scenario(False)) == []
    assert recorded(record) == []
    # The same file in a trusted folder does start it (so the check above can fail).
    assert run(scenario(True), timeout=60) == ["ready"]
    assert any(line.startswith("started") for line in recorded(record))


def test_the_sdk_is_imported_only_when_a_server_is_configured(tmp_path: Path) -> None:
    code = f"""
import asyncio, contextlib, io, sys
from pathlib import Path
from picode.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    main(["--version"])
assert "mcp" not in sys.modules, "picode --version imported mcp"
from tests.session.conftest import SessionHarness
from tests.session.mcp.conftest import settings_with, stdio_server

async def open_with(settings):
    harness = SessionHarness(Path({str(tmp_path)!r}))
    session = await harness.open(harness.faux(), settings=settings)
    await session.close()
    harness.close()

asyncio.run(open_with(None))
assert "mcp" not in sys.modules, "a session without servers imported mcp"
asyncio.run(open_with(settings_with(files=stdio_server(Path({str(tmp_path / "r")!r})))))
assert "mcp" in sys.modules
"""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[3]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root, timeout=60)
