"""Keys: Ctrl+C, Ctrl+D, Shift+Tab, Ctrl+P, Ctrl+T, Ctrl+O, quitting while busy, keymaps."""

from __future__ import annotations

import json

from picode.ai.providers.faux import (
    FauxText,
    FauxThinking,
    FauxToolCall,
    FauxTurn,
    text_turn,
)
from picode.tui.widgets.messages import ThinkingView
from picode.tui.widgets.tool_call import ToolCallView
from tests.tui.conftest import (
    SIZE,
    TuiHarness,
    has_notice,
    notices,
    open_session,
    press_now,
    run,
    start_turn,
    type_text,
    wait_until,
)


def test_ctrl_c_clears_then_quits_when_pressed_twice_within_a_second(tui: TuiHarness) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None)
            await type_text(pilot, "draft")
            await pilot.press("ctrl+c")
            assert app.editor.text == ""
            assert app.is_running
            tui.clock.advance(2.0)  # too late to count as a double press
            await pilot.press("ctrl+c")
            assert app.is_running
            tui.clock.advance(0.5)
            await pilot.press("ctrl+c")
            await wait_until(pilot, lambda: not app.is_running, what="app exit")
        assert app.return_code == 0

    run(scenario())


def test_ctrl_d_deletes_in_a_non_empty_editor_and_quits_on_an_empty_one(tui: TuiHarness) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None)
            await type_text(pilot, "ab")
            await pilot.press("left", "ctrl+d")
            assert app.editor.text == "a"
            assert app.is_running
            await pilot.press("backspace", "ctrl+d")
            await wait_until(pilot, lambda: not app.is_running, what="app exit")

    run(scenario())


def test_keys_read_together_apply_in_order_before_an_app_key(tui: TuiHarness) -> None:
    # "abc" and ctrl+d in one read: ctrl+d must see the editor holding "abc".
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None)
            press_now(app, "a", "b", "c", "left", "ctrl+d")
            await wait_until(pilot, lambda: app.editor.text == "ab", what="ctrl+d deleted c")
            press_now(app, "x", "ctrl+c")  # clears "abx"; the quit is only armed
            await wait_until(pilot, lambda: app.editor.text == "", what="cleared")
            assert app.is_running

    run(scenario())


def test_quitting_while_busy_aborts_and_saves(tui: TuiHarness) -> None:
    faux = tui.faux(FauxTurn([FauxText("long ")], hang=True))
    app = tui.app(faux)

    async def scenario() -> str:
        async with app.run_test(size=SIZE) as pilot:
            session = await start_turn(pilot, "remember me")
            press_now(app, "ctrl+d")
            await wait_until(pilot, lambda: not app.is_running, what="app exit")
            assert faux.abort_seen.is_set()
            path = session.session_file_path
            assert path is not None
            return path.read_text(encoding="utf-8")

    saved = run(scenario())
    texts = [
        json.loads(line).get("message", {}).get("content") for line in saved.splitlines() if line
    ]
    assert "remember me" in texts


def test_alt_t_cycles_thinking_and_the_footer_follows(tui: TuiHarness) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            session = await open_session(pilot)
            assert app.info_footer.info.thinking == "off"
            await pilot.press("alt+t")
            await wait_until(pilot, lambda: app.info_footer.info.thinking != "off")
            assert app.info_footer.info.thinking == session.thinking
            assert "thinking " + session.thinking in app.info_footer.right_text().plain
            assert app.focused is app.editor  # alt+t did not move the focus
            await wait_until(pilot, lambda: has_notice(app, f"Thinking: {session.thinking}"))
            await pilot.press("alt+t", "alt+t", "alt+t")
            await wait_until(pilot, lambda: has_notice(app, f"Thinking: {session.thinking}"))
            # A run of presses is one line, saying where it ended.
            assert len([n for n in notices(app) if n.startswith("Thinking: ")]) == 1

    run(scenario())


def test_ctrl_p_without_other_models_says_so(tui: TuiHarness) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            session = await open_session(pilot)
            before = session.model.ref
            await pilot.press("ctrl+p")
            assert session.model.ref == before
            assert any("No other model" in n.message for n in app._notifications)

    run(scenario())


def test_ctrl_t_and_ctrl_o_toggle_thinking_and_tool_output(tui: TuiHarness) -> None:
    (tui.cwd / "notes.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    faux = tui.faux(
        FauxTurn([FauxThinking("pondering"), FauxToolCall("read", {"path": "notes.txt"})]),
        text_turn("read it"),
    )
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None)
            await type_text(pilot, "read")
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.query(ToolCallView))
            view = app.query_one(ToolCallView)
            await wait_until(pilot, lambda: view.state == "success")
            assert view.body_text.startswith("Read 3 lines")
            assert "two" not in view.body_text
            await pilot.press("ctrl+o")
            assert "two" in view.body_text
            thinking = app.query_one(ThinkingView)
            assert not thinking.collapsed
            await pilot.press("ctrl+t")
            assert thinking.collapsed
            assert "pondering" not in thinking.render().plain
            await pilot.press("ctrl+t")
            assert "pondering" in thinking.render().plain

    run(scenario())


def test_keymap_file_remaps_a_binding_and_reports_unknown_ids(tui: TuiHarness) -> None:
    tui.paths.config_dir.mkdir(parents=True, exist_ok=True)
    tui.paths.keymap_file.write_text(
        'interrupt = "ctrl+g"\nno_such_binding = "f5"\n', encoding="utf-8"
    )
    faux = tui.faux(FauxTurn([FauxText("busy ")], hang=True))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            session = await open_session(pilot)
            messages = [n.message for n in app._notifications]
            assert any("no_such_binding" in m and "keymap.toml" in m for m in messages)
            await type_text(pilot, "go")
            press_now(app, "enter")
            await wait_until(pilot, lambda: session.is_running)
            press_now(app, "ctrl+g")
            await wait_until(pilot, faux.abort_seen.is_set, what="abort via remapped key")
            await wait_until(pilot, lambda: not session.is_running)

    run(scenario())


def test_ctrl_c_while_streaming_clears_then_interrupts_then_quits(tui: TuiHarness) -> None:
    from tests.tui.conftest import has_notice

    faux = tui.faux(FauxTurn([FauxText("long ")], hang=True))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            session = await start_turn(pilot, "go")
            await type_text(pilot, "draft")
            await pilot.press("ctrl+c")
            assert app.editor.text == "" and session.is_running
            await pilot.press("ctrl+c")  # empty editor, running: interrupts like Esc
            await wait_until(pilot, lambda: not session.is_running, what="interrupted")
            assert has_notice(app, "Interrupted") and app.is_running
            tui.clock.advance(0.5)
            await pilot.press("ctrl+c")
            await wait_until(pilot, lambda: not app.is_running, what="app exit")

    run(scenario())


def test_a_burst_of_ten_pageup_keys_scrolls_ten_pages(tui: TuiHarness) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await open_session(pilot)
            app.transcript.shown_screens = None  # all forty blocks laid out: room for pages
            for block in range(40):
                app.report("\n".join(f"line {block}.{row}" for row in range(20)))
            await pilot.pause()
            app.transcript.scroll_end(animate=False, immediate=True)
            await wait_until(pilot, lambda: app.transcript.scroll_y > 0, what="the bottom")
            page = app.transcript.scrollable_content_region.height
            bottom = app.transcript.scroll_y
            assert bottom > 12 * page  # room for ten pages

            press_now(app, *["pageup"] * 10)  # all ten queued before the next frame
            await wait_until(
                pilot, lambda: app.transcript.scroll_y <= bottom - 10 * page, what="ten pages"
            )
            press_now(app, *["pagedown"] * 4)
            await wait_until(
                pilot, lambda: app.transcript.scroll_y >= bottom - 6 * page, what="four back"
            )
            await pilot.pause()
            assert app.transcript.scroll_y == bottom - 6 * page

    run(scenario())


def test_ctrl_p_says_which_model_it_switched_to(tui: TuiHarness) -> None:
    from picode.ai.providers.faux import FauxProvider

    faux = tui.faux()
    other_provider = FauxProvider([], model_id="faux-other")
    tui.providers.append(other_provider)
    other = other_provider.model
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            session = await open_session(pilot)
            session.available_models = lambda: [faux.model, other]  # type: ignore[method-assign]
            await pilot.press("ctrl+p")
            await wait_until(pilot, lambda: session.model.ref == other.ref, what="the switch")
            await wait_until(pilot, lambda: has_notice(app, f"Model: {other.ref}"))
            assert [n for n in notices(app) if n.startswith("Model:")] == [f"Model: {other.ref}"]

    run(scenario())
