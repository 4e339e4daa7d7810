"""How the todo panel and a todo call look (pytest-textual-snapshot)."""

from __future__ import annotations

from typing import Any

import pytest

from picode.ai.providers.faux import FauxToolCall, FauxTurn, text_turn
from picode.tui.app import PicodeApp
from tests.tui.conftest import SIZE, TuiHarness, press_now, type_text, wait_until

PLAN = [
    {"content": "Read the failing test", "status": "completed"},
    {"content": "Fix the parser's handling of empty lines", "status": "in_progress"},
    {"content": "Run the whole suite", "status": "pending"},
]


@pytest.fixture(autouse=True)
def fixed_system_prompt(monkeypatch: pytest.MonkeyPatch) -> None:
    # The real prompt names the temporary cwd and today's date; token estimates would vary.
    monkeypatch.setattr(
        "picode.session.system_prompt.build_system_prompt", lambda **_: "You are picode."
    )


def test_the_panel_above_the_editor_and_the_call_in_the_transcript(
    tui: TuiHarness, snap_compare: Any
) -> None:
    faux = tui.faux(
        FauxTurn([FauxToolCall("todo", {"todos": PLAN})], usage=(900, 40)),
        text_turn("Working on the parser now.", usage=(1000, 10)),
    )
    app = tui.app(faux)

    async def run_before(pilot: Any) -> None:
        shown: PicodeApp = pilot.app
        await wait_until(pilot, lambda: shown.session is not None, what="session")
        shown.editor.cursor_blink = False
        await type_text(pilot, "fix the parser")
        press_now(shown, "enter")
        session = shown.session
        assert session is not None
        await wait_until(pilot, lambda: shown.todo_panel.display and not session.is_running)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
