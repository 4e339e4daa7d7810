"""``/mcp`` and MCP tool calls in the real app, with a real stdio MCP server."""

from __future__ import annotations

from pathlib import Path

from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.session.config.settings import McpServer
from picode.session.safety.approval import ApprovalRequest
from picode.tui.approval import title_for
from picode.tui.widgets.info import InfoView
from picode.tui.widgets.tool_call import ToolCallView
from tests.session.mcp.conftest import settings_with, stdio_server
from tests.tui.conftest import SIZE, TuiHarness, has_notice, opened, run, send, wait_until


def _info(app: object, title: str) -> InfoView | None:
    views = [v for v in app.query(InfoView) if v.title_text == title]  # type: ignore[attr-defined]
    return views[-1] if views else None


def test_mcp_lists_servers_states_tools_and_errors(tui: TuiHarness, tmp_path: Path) -> None:
    settings = settings_with(
        files=stdio_server(tmp_path / "record.txt", tools={"allow": ["echo", "picture"]}),
        broken=McpServer(command="picode-no-such-mcp-server"),
    )
    faux = tui.faux(tool_turn(FauxToolCall("mcp__files__echo", {"text": "hello"})), text_turn("ok"))
    app = tui.app(faux, settings=settings)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            session = app.session
            assert session is not None
            await wait_until(
                pilot,
                lambda: [s.state for s in session.mcp_servers()] == ["ready", "failed"],
                what="both servers settled",
                timeout=30,
            )
            # A server that fails says so once, without /mcp.
            await wait_until(pilot, lambda: has_notice(app, "MCP server 'broken' failed"))
            await send(pilot, "/mcp")
            await wait_until(pilot, lambda: _info(app, "MCP servers") is not None)
            text = _info(app, "MCP servers").plain  # type: ignore[union-attr]
            assert "files   ready (2 tools) · stdio" in text
            assert "echo, picture" in text
            assert "broken  failed: command not found" in text
            assert "picode-no-such-mcp-server" in text

            await send(pilot, "echo hello")
            await wait_until(
                pilot,
                lambda: any(v.is_finished for v in app.query(ToolCallView)),
                what="the MCP call's result",
                timeout=20,
            )
            [view] = app.query(ToolCallView)
            assert view.header_text.startswith("● files › echo  hello")
            assert "echo: hello" in view.body_text

    run(scenario(), timeout=60)


def test_mcp_without_servers_says_how_to_add_one(tui: TuiHarness) -> None:
    app = tui.app(tui.faux(text_turn("ok")))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "/mcp")
            await wait_until(pilot, lambda: has_notice(app, "No MCP servers are configured"))

    run(scenario())


def test_the_approval_question_names_server_and_tool() -> None:
    request = ApprovalRequest("c1", "mcp__files__delete", {"path": "a"}, "")
    assert title_for(request) == "Run files › delete?"
