"""Ctrl+O hints name what the key will do now: expand a folded result, fold an open one."""

from __future__ import annotations

from picode.ai.providers.faux import FauxToolCall, FauxTurn, text_turn
from picode.tui.widgets import tool_render
from picode.tui.widgets.tool_call import ToolCallView
from tests.tui.conftest import SIZE, TuiHarness, run, send, wait_until


def test_an_expanded_read_offers_to_fold_and_a_folded_one_to_expand(tui: TuiHarness) -> None:
    (tui.cwd / "notes.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    faux = tui.faux(FauxTurn([FauxToolCall("read", {"path": "notes.txt"})]), text_turn("ok"))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None)
            await send(pilot, "read it")
            await wait_until(pilot, lambda: app.query(ToolCallView))
            view = app.query_one(ToolCallView)
            await wait_until(pilot, lambda: view.state == "success")
            assert view.body_text == "Read 3 lines (ctrl+o to expand)"
            await pilot.press("ctrl+o")
            assert "two" in view.body_text
            assert "ctrl+o to expand" not in view.body_text
            assert view.body_text.startswith("Read 3 lines (ctrl+o to fold)")
            await pilot.press("ctrl+o")
            assert view.body_text == "Read 3 lines (ctrl+o to expand)"

    run(scenario())


def test_an_expanded_long_write_says_the_rest_is_not_shown(tui: TuiHarness) -> None:
    content = "".join(f"line {i}\n" for i in range(8000))
    faux = tui.faux(
        FauxTurn([FauxToolCall("write", {"path": "big.txt", "content": content})]),
        text_turn("written"),
    )
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None)
            await send(pilot, "write it")
            await wait_until(pilot, lambda: app.query(ToolCallView))
            view = app.query_one(ToolCallView)
            await wait_until(pilot, lambda: view.state == "success", timeout=15)
            await pilot.press("ctrl+o")
            last = view.body_text.split("\n")[-1]
            hidden = 8000 - tool_render.EXPANDED_LINES
            assert last == f"… {hidden} more lines not shown (ctrl+o to fold)"
            assert "ctrl+o to expand" not in view.body_text
            await pilot.press("ctrl+o")
            assert view.body_text == "Wrote 8000 lines (ctrl+o to expand)"

    run(scenario())
