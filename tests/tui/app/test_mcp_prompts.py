"""A server's prompts as slash commands and its resources in the ``@`` list, in the real
app with a real stdio MCP server (prompt ``review``, resource ``notes://today``)."""

from __future__ import annotations

from pathlib import Path

from picode.ai.providers.faux import text_turn
from picode.ai.types import UserMessage
from tests.session.mcp.conftest import recorded, settings_with, stdio_server
from tests.tui.app.test_completion import needs_rg
from tests.tui.conftest import SIZE, TuiHarness, opened, run, send, type_text, wait_until


@needs_rg
def test_prompts_complete_and_run_and_resources_complete(tui: TuiHarness, tmp_path: Path) -> None:
    record = tmp_path / "record.txt"
    faux = tui.faux(text_turn("reviewed"), text_turn("noted"))
    app = tui.app(faux, settings=settings_with(files=stdio_server(record)))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            session = (await opened(pilot)).session
            assert session is not None
            await wait_until(pilot, lambda: bool(session.mcp_prompts()), timeout=30)
            popup = app.completion_popup
            await type_text(pilot, "/mcp__")
            await wait_until(pilot, lambda: popup.is_open)
            [item] = popup.items
            assert item.value == "/mcp__files__review"
            assert item.label == "/mcp__files__review <code> [focus]"
            assert item.detail == "Review some code."
            await pilot.press("tab")
            assert app.editor.text == "/mcp__files__review "
            await type_text(pilot, "y")
            await pilot.press("enter")
            await wait_until(pilot, lambda: "prompt review y bugs" in recorded(record), timeout=20)
            await wait_until(pilot, lambda: not session.is_running, timeout=20)
            users = [m for m in session.messages if isinstance(m, UserMessage)]
            assert users[0].text == "Review this code for bugs:\ny"

            await type_text(pilot, "see @today")
            await wait_until(pilot, lambda: popup.is_open)
            assert popup.items[0].value == "files:notes://today"
            assert popup.items[0].detail == "today"
            await pilot.press("tab")
            assert app.editor.text == "see @files:notes://today "
            await send(pilot, "")
            await wait_until(pilot, lambda: "read notes://today" in recorded(record), timeout=20)

    run(scenario(), timeout=60)
