"""Esc: stops the stream or the running tools at once, marks the turn, loses nothing typed."""

from __future__ import annotations

from picode.ai.providers.faux import FauxText, FauxToolCall, FauxTurn, text_turn
from picode.tui.widgets.markdown import StreamingMarkdown
from picode.tui.widgets.messages import UserMessageView
from picode.tui.widgets.notice import NoticeView
from picode.tui.widgets.tool_call import ToolCallView
from tests.tui.app.conftest import FakeSlowTool
from tests.tui.conftest import (
    SIZE,
    TuiHarness,
    open_session,
    press_now,
    run,
    start_turn,
    type_text,
    wait_until,
)


def _interrupted_markers(app: object) -> list[NoticeView]:
    return [n for n in app.query(NoticeView) if n.text == "Interrupted"]  # type: ignore[attr-defined]


def test_esc_mid_stream_aborts_the_provider_and_frees_the_editor(tui: TuiHarness) -> None:
    faux = tui.faux(FauxTurn([FauxText("partial answer ")], hang=True), text_turn("second answer"))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            session = await open_session(pilot)
            await type_text(pilot, "go")
            press_now(app, "enter")
            await wait_until(
                pilot,
                lambda: any("partial" in md.source for md in app.query(StreamingMarkdown)),
                what="partial text",
            )
            assert session.is_running and app.status.is_working
            press_now(app, "escape")
            await wait_until(pilot, faux.abort_seen.is_set, what="provider saw the abort")
            await wait_until(pilot, lambda: _interrupted_markers(app), what="marker")
            assert not session.is_running
            assert not app.status.is_working
            # The editor works again: the next prompt is answered.
            await type_text(pilot, "next")
            await pilot.press("enter")
            await wait_until(
                pilot,
                lambda: any("second answer" in md.source for md in app.query(StreamingMarkdown)),
                what="second answer",
            )
            assert [u.text for u in app.query(UserMessageView)] == ["go", "next"]

    run(scenario())


def test_esc_while_a_tool_runs_fires_the_tool_signal(tui: TuiHarness) -> None:
    slow = FakeSlowTool()
    faux = tui.faux(FauxTurn([FauxToolCall("slow", {})]), text_turn("never sent"))
    app = tui.app(faux, extra_tools=[slow])

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None)
            await type_text(pilot, "work")
            press_now(app, "enter")
            await wait_until(pilot, lambda: slow.started, what="tool started")
            view = app.query_one(ToolCallView)
            await wait_until(pilot, lambda: "slow is working" in view.body_text, what="partial")
            assert view.state == "running"
            press_now(app, "escape")
            await wait_until(pilot, lambda: slow.signal_fired, what="tool signal")
            await wait_until(pilot, lambda: view.state == "error", what="tool marked failed")
            await wait_until(pilot, lambda: _interrupted_markers(app), what="marker")
            assert app.session is not None and not app.session.is_running
            assert len(faux.requests) == 1  # the turn did not continue

    run(scenario())


def test_esc_puts_queued_messages_back_in_the_editor(tui: TuiHarness) -> None:
    faux = tui.faux(FauxTurn([FauxText("busy ")], hang=True))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            session = await start_turn(pilot, "go")
            app.editor.set_text("steer me")
            press_now(app, "enter")
            await wait_until(pilot, lambda: app.queue.steering == ["steer me"], what="queued")
            app.editor.set_text("half typed")
            press_now(app, "escape")
            await wait_until(pilot, lambda: not session.is_running)
            assert app.editor.text == "steer me\n\nhalf typed"
            assert session.queued_steering == []
            await wait_until(pilot, lambda: not app.queue.display, what="queue hidden")

    run(scenario())


def test_esc_when_idle_does_nothing(tui: TuiHarness) -> None:
    faux = tui.faux()
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None)
            await type_text(pilot, "draft")
            assert not app.check_action("interrupt", ())
            await pilot.press("escape")
            assert app.editor.text == "draft"
            assert not _interrupted_markers(app)
            assert faux.requests == []

    run(scenario())
