"""Typing while the agent works: Enter steers, Alt+Enter follows up, Alt+Up takes back."""

from __future__ import annotations

from picode.agent.tool_exec import SKIPPED_FOR_STEERING
from picode.ai.providers.faux import FauxText, FauxToolCall, FauxTurn, text_turn
from picode.ai.types import UserMessage
from picode.tui.widgets.markdown import StreamingMarkdown
from picode.tui.widgets.messages import AssistantMessageView, UserMessageView
from picode.tui.widgets.tool_call import ToolCallView
from tests.tui.app.conftest import FakeSlowTool
from tests.tui.conftest import (
    SIZE,
    TuiHarness,
    press_now,
    run,
    start_turn,
    type_text,
    wait_until,
)


def test_enter_while_busy_steers_and_pending_tools_are_skipped(tui: TuiHarness) -> None:
    quick, slow = FakeSlowTool("quick"), FakeSlowTool("slow")
    faux = tui.faux(
        FauxTurn([FauxToolCall("quick", {}), FauxToolCall("slow", {})]),
        text_turn("steered answer"),
    )
    app = tui.app(faux, extra_tools=[quick, slow])

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None)
            await type_text(pilot, "start")
            press_now(app, "enter")
            await wait_until(pilot, lambda: quick.started and slow.started, what="tools run")
            app.editor.set_text("change of plan")
            press_now(app, "enter")
            await wait_until(pilot, lambda: app.queue.steering == ["change of plan"])
            assert app.editor.text == ""
            assert quick.release is not None
            quick.release.set()  # one call completes; the queued steering cancels the rest
            await wait_until(pilot, lambda: slow.signal_fired, what="slow tool skipped")
            views = {view.tool_name: view for view in app.query(ToolCallView)}
            await wait_until(pilot, lambda: views["slow"].state == "error")
            assert SKIPPED_FOR_STEERING in views["slow"].body_text
            assert views["quick"].state == "success"
            await wait_until(
                pilot,
                lambda: any("steered answer" in md.source for md in app.query(StreamingMarkdown)),
                what="answer to the steering message",
            )
            assert [u.text for u in app.query(UserMessageView)] == ["start", "change of plan"]
            last = faux.last_request.messages[-1]
            assert isinstance(last, UserMessage) and last.text == "change of plan"
            await wait_until(pilot, lambda: not app.queue.display, what="queue emptied")

    run(scenario())


def test_alt_enter_queues_a_follow_up_that_runs_after_the_turn(tui: TuiHarness) -> None:
    faux = tui.faux(
        FauxTurn([FauxText("first part of a slow answer")], end_delay=0.6),
        text_turn("follow-up answer"),
    )
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await start_turn(pilot, "first")
            app.editor.set_text("afterwards")
            press_now(app, "alt+enter")
            await wait_until(pilot, lambda: app.queue.follow_ups == ["afterwards"], what="queued")
            # Not delivered mid-turn: the first answer finishes first.
            assert [u.text for u in app.query(UserMessageView)] == ["first"]
            await wait_until(
                pilot,
                lambda: any("follow-up answer" in md.source for md in app.query(StreamingMarkdown)),
                what="follow-up answered",
            )
            order = [
                type(w).__name__
                for w in app.transcript.entries
                if isinstance(w, UserMessageView | AssistantMessageView)
            ]
            assert order == [
                "UserMessageView",
                "AssistantMessageView",
                "UserMessageView",
                "AssistantMessageView",
            ]
            assert [u.text for u in app.query(UserMessageView)] == ["first", "afterwards"]

    run(scenario())


def test_alt_up_takes_queued_messages_back_into_the_editor(tui: TuiHarness) -> None:
    faux = tui.faux(FauxTurn([FauxText("working ")], hang=True))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            session = await start_turn(pilot, "go")
            assert not app.check_action("dequeue", ())
            app.editor.set_text("one")
            press_now(app, "enter")
            await wait_until(pilot, lambda: app.queue.steering == ["one"])
            app.editor.set_text("two")
            press_now(app, "alt+enter")
            await wait_until(pilot, lambda: app.queue.follow_ups == ["two"])
            press_now(app, "alt+up")
            await wait_until(pilot, lambda: app.editor.text == "one\n\ntwo", what="restored")
            assert session.queued_steering == [] and session.queued_follow_ups == []
            assert session.is_running  # taking messages back does not stop the agent
            session.abort()
            await wait_until(pilot, lambda: not session.is_running)

    run(scenario())


def test_a_finished_call_shows_done_while_an_earlier_sibling_still_runs(tui: TuiHarness) -> None:
    first, second = FakeSlowTool("first"), FakeSlowTool("second")
    faux = tui.faux(
        FauxTurn([FauxToolCall("first", {}), FauxToolCall("second", {})]), text_turn("both done")
    )
    app = tui.app(faux, extra_tools=[first, second])

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None)
            await type_text(pilot, "go")
            press_now(app, "enter")
            await wait_until(pilot, lambda: first.started and second.started, what="both run")
            views = {view.tool_name: view for view in app.query(ToolCallView)}
            assert second.release is not None
            second.release.set()  # the later call ends; the earlier one still runs
            await wait_until(pilot, lambda: views["second"].state == "success")
            assert views["first"].state == "running"
            assert first.release is not None
            first.release.set()
            await wait_until(pilot, lambda: views["first"].state == "success")

    run(scenario())
