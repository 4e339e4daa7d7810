"""A server's request for input as a form in the real app, with a real stdio MCP server."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Select, Static

from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.ai.types import ToolResultMessage
from picode.tui.elicitation import ElicitationScreen
from tests.session.mcp.conftest import recorded, settings_with, stdio_server
from tests.tui.conftest import SIZE, TuiHarness, opened, run, screen_of, send, wait_until


def _results(app: object) -> list[str]:
    session = app.session  # type: ignore[attr-defined]
    return [m.text for m in session.messages if isinstance(m, ToolResultMessage)]


def _book(tui: TuiHarness, tmp_path: Path) -> object:
    faux = tui.faux(tool_turn(FauxToolCall("mcp__files__book", {})), text_turn("ok"))
    return tui.app(faux, settings=settings_with(files=stdio_server(tmp_path / "record.txt")))


def test_the_form_is_filled_checked_and_sent(tui: TuiHarness, tmp_path: Path) -> None:
    app = _book(tui, tmp_path)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:  # type: ignore[attr-defined]
            session = (await opened(pilot)).session
            await wait_until(pilot, lambda: session.mcp_servers()[0].state == "ready", timeout=30)
            await send(pilot, "book a table")
            screen = await screen_of(pilot, ElicitationScreen)
            # The server's words, with its control characters spelled out.
            message = str(screen.query_one("#elicit-message", Static).render())
            assert "Chez MCP?" in message and "\x1b" not in message
            await pilot.press(*"A")  # too short (min_length 2); guests left empty
            await pilot.press("ctrl+s")
            errors = [str(screen.query_one(f"#elicit-error-{i}", Static).render()) for i in (0, 1)]
            assert errors == ["at least 2 characters", "required"]
            assert isinstance(app.screen, ElicitationScreen)  # type: ignore[attr-defined]
            await pilot.press("d", "tab", "3", "tab", "space")
            screen.query_one("#elicit-3", Select).value = "terrace"
            await pilot.press("ctrl+s")
            await wait_until(pilot, lambda: len(_results(app)) == 1, what="the result", timeout=30)
            assert _results(app)[0] == "booked: Ad, 3, vegan=True, terrace"

    run(scenario(), timeout=60)


def test_escape_cancels_the_form(tui: TuiHarness, tmp_path: Path) -> None:
    app = _book(tui, tmp_path)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:  # type: ignore[attr-defined]
            session = (await opened(pilot)).session
            await wait_until(pilot, lambda: session.mcp_servers()[0].state == "ready", timeout=30)
            await send(pilot, "book a table")
            await screen_of(pilot, ElicitationScreen)
            await pilot.press("escape")
            await wait_until(pilot, lambda: len(_results(app)) == 1, what="the result", timeout=30)
            assert _results(app)[0] == "not booked: cancel"

    run(scenario(), timeout=60)
    assert "book cancel" in recorded(tmp_path / "record.txt")
