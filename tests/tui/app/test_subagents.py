"""A subagent in the TUI: one block under its task call (agent, current tool, tokens,
elapsed), Ctrl+O expands it to the child's transcript, Esc stops it with the parent."""

from __future__ import annotations

from typing import Any

from picode.ai.providers.faux import FauxText, FauxToolCall, FauxTurn, text_turn, tool_turn
from picode.ai.types import Context, UserMessage
from picode.tui.widgets.tool_call import ToolCallView
from tests.tui.conftest import SIZE, TuiHarness, run, send, wait_until
from tests.tui.hosts import screen_text


def _script(parent: list[FauxTurn], child: list[FauxTurn]) -> Any:
    def script(context: Context) -> FauxTurn:
        first = next((m for m in context.messages if isinstance(m, UserMessage)), None)
        if first is not None and first.text == "look around":
            return child.pop(0)
        return parent.pop(0)

    return script


def _task() -> FauxToolCall:
    return FauxToolCall("task", {"description": "survey the code", "prompt": "look around"})


def test_a_running_subagent_shows_its_state_and_expands_to_its_transcript(
    tui: TuiHarness,
) -> None:
    parent = [tool_turn(_task())]
    child = [
        tool_turn(FauxToolCall("ls", {"path": "."}), text="Listing\x1b]0;owned\x07 first"),
        FauxTurn([FauxText("still going")], hang=True),
    ]
    script = _script(parent, child)
    faux = tui.faux(*[script] * 3)
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None)
            await send(pilot, "delegate")
            await wait_until(pilot, lambda: app.query(ToolCallView))
            view = app.query_one(ToolCallView)
            assert "survey the code" in view.header_text
            await wait_until(pilot, lambda: "general" in view.body_text)
            await wait_until(pilot, lambda: len(faux.requests) == 3, timeout=10)
            await wait_until(pilot, lambda: "tokens" in view.body_text)
            first = view.body_text.split("\n")[0]
            assert first.startswith("general · ")
            assert "ctrl+o to expand" in first
            await pilot.press("ctrl+o")
            await wait_until(pilot, lambda: "● ls ." in view.body_text)
            # The child's text, its escape sequence removed.
            assert "Listing first" in view.body_text
            assert "\x1b" not in view.body_text and "\x07" not in view.body_text
            await pilot.press("escape")
            await wait_until(pilot, lambda: view.state == "error", timeout=10)
            assert view.body_text.startswith("general · ")
            assert "Aborted" in view.body_text
            assert faux.aborts == 1

    run(scenario())


def _answering(tui: TuiHarness, answer: str) -> Any:
    """The app, its parent delegating once to a child that answers ``answer``."""
    parent = [tool_turn(_task()), text_turn("thanks")]
    child = [text_turn(answer)]
    return tui.app(tui.faux(*[_script(parent, child)] * 3))


async def _delegated(pilot: Any) -> ToolCallView:
    """The task call's view, once the child has answered."""
    app = pilot.app
    await wait_until(pilot, lambda: app.session is not None)
    await send(pilot, "delegate")
    await wait_until(pilot, lambda: app.query(ToolCallView))
    view: ToolCallView = app.query_one(ToolCallView)
    await wait_until(pilot, lambda: view.state == "success", timeout=10)
    return view


def test_a_finished_subagent_shows_its_answer_and_transcript_path(tui: TuiHarness) -> None:
    app = _answering(tui, "The answer\nin two lines")

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            view = await _delegated(pilot)
            assert "The answer\nin two lines" in view.body_text
            assert "Transcript:" not in view.body_text
            await pilot.press("ctrl+o")
            assert "Transcript: " in view.body_text
            assert ".jsonl" in view.body_text

    run(scenario())


def test_a_subagents_answer_is_drawn_as_markdown_folded_and_whole(tui: TuiHarness) -> None:
    answer = "## Findings\x1b]0;owned\x07\n\nThe **retry** loop is in `net.py`.\n\n" + "\n".join(
        f"- point {i}" for i in range(8)
    )
    app = _answering(tui, answer)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await _delegated(pilot)
            await pilot.pause()
            shown = screen_text(app)
            # Drawn, not quoted: no heading marks or emphasis stars, a bullet per item.
            assert "Findings" in shown and "## Findings" not in shown
            assert "The retry loop is in net.py." in shown and "**" not in shown
            assert "• point 1" in shown and "point 2" not in shown
            assert "\x1b" not in shown and "\x07" not in shown
            assert "… 6 more lines (ctrl+o to expand)" in shown
            await pilot.press("ctrl+o")
            await wait_until(pilot, lambda: "• point 7" in screen_text(app))
            assert "more lines" not in screen_text(app)
            await pilot.press("ctrl+o")
            await wait_until(pilot, lambda: "point 7" not in screen_text(app))
            assert "… 6 more lines (ctrl+o to expand)" in screen_text(app)

    run(scenario())


def test_task_calls_whose_subagents_ask_show_waiting_for_approval_also_in_line(
    tui: TuiHarness,
) -> None:
    """Two subagents ask at once: one question is on screen, the other waits its turn;
    both task calls say they wait for the person, each until its own question is answered."""
    from picode.session.config.settings import Settings
    from picode.tui.approval import ARM_DELAY_S

    jobs = [FauxToolCall("task", {"description": f"job {n}", "prompt": f"run {n}"}) for n in (1, 2)]
    parent = [tool_turn(*jobs), text_turn("both done")]

    def script(context: Context) -> FauxTurn:
        first = next((m for m in context.messages if isinstance(m, UserMessage)), None)
        if first is not None and first.text.startswith("run "):
            if len(context.messages) == 1:
                return tool_turn(FauxToolCall("bash", {"command": f"echo {first.text}"}))
            return text_turn("ran")
        return parent.pop(0)

    app = tui.app(tui.faux(*[script] * 6), settings=Settings(approval="all"))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None)
            await send(pilot, "delegate")
            await wait_until(pilot, lambda: len(app.query(ToolCallView)) == 2)
            first, second = app.query(ToolCallView)
            waiting = "waiting for approval"
            await wait_until(
                pilot,
                lambda: waiting in first.header_text and waiting in second.header_text,
                what="both task calls waiting",
            )
            prompt = app.approvals.prompt
            assert prompt is not None
            asked_first = prompt.request.origin_call_id
            on_screen, in_line = (
                (first, second) if asked_first == first.call_id else (second, first)
            )
            tui.clock.advance(ARM_DELAY_S)
            await pilot.press("y")
            await wait_until(pilot, lambda: waiting not in on_screen.header_text)
            assert waiting in in_line.header_text
            await wait_until(pilot, lambda: app.approvals.prompt not in (None, prompt))
            tui.clock.advance(ARM_DELAY_S)
            await pilot.press("y")
            await wait_until(pilot, lambda: not app.session.is_running, timeout=10)
            assert first.state == second.state == "success"
            assert waiting not in first.header_text + second.header_text

    run(scenario())
