"""The todo panel above the editor: shown while the model's list has open items."""

from __future__ import annotations

from typing import Any

from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.session.agent_session import AgentSession
from picode.tui.widgets.tool_call import ToolCallView
from tests.tui.conftest import SIZE, TuiHarness, open_session, run, send, wait_until

PLAN = [
    {"content": "Read the parser", "status": "completed"},
    {"content": "Add tests", "status": "in_progress"},
    {"content": "Update the docs", "status": "pending"},
]
DONE = [{**item, "status": "completed"} for item in PLAN]


def _todo_turn(items: Any) -> Any:
    return tool_turn(FauxToolCall("todo", {"todos": items}))


def _panel_lines(app: Any) -> list[str]:
    return str(app.todo_panel.render().plain).split("\n")


def test_the_panel_shows_while_items_are_open_and_hides_when_all_are_done(
    tui: TuiHarness,
) -> None:
    faux = tui.faux(_todo_turn(PLAN), text_turn("working"), _todo_turn(DONE), text_turn("done"))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            session = await open_session(pilot)
            assert not app.todo_panel.display
            await send(pilot, "fix the parser")
            await wait_until(pilot, lambda: app.todo_panel.display, what="the todo panel")
            assert _panel_lines(app) == ["☑ Read the parser", "▶ Add tests", "☐ Update the docs"]
            # Above the editor, below the transcript.
            assert app.todo_panel.region.y < app.editor.region.y
            assert app.todo_panel.region.y >= app.transcript.region.bottom
            # The call itself reads as a checklist, not as its JSON.
            await wait_until(pilot, lambda: not session.is_running)
            (view,) = app.query(ToolCallView)
            assert view.header_text.startswith("● todo  1/3 done")
            assert "▶ Add tests" in view.body_text and "{" not in view.body_text
            await send(pilot, "finish")
            await wait_until(pilot, lambda: not app.todo_panel.display, what="the panel hidden")
            await wait_until(pilot, lambda: not session.is_running)
            assert app.todo_panel.display is False

    run(scenario())


def test_a_resumed_session_shows_its_list_and_new_hides_it(tui: TuiHarness) -> None:
    faux = tui.faux(_todo_turn(PLAN), text_turn("working"))

    async def scenario() -> None:
        first = await AgentSession.open(tui.options(faux, session="new"))
        await first.prompt("fix the parser")
        path = first.session_file_path
        await first.close()
        app = tui.app(faux, options={"session": str(path)})
        async with app.run_test(size=SIZE) as pilot:
            await open_session(pilot)
            await wait_until(pilot, lambda: app.todo_panel.display, what="the restored list")
            assert _panel_lines(app)[1] == "▶ Add tests"
            await send(pilot, "/new")
            await wait_until(pilot, lambda: not app.todo_panel.display, what="the panel hidden")

    run(scenario())
