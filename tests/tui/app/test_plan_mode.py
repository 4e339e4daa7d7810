"""Plan mode in the real app: Shift+Tab and /plan, the footer, and the plan prompt."""

from __future__ import annotations

from typing import Any

from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.ai.types import ToolResultMessage
from picode.session.config.settings import Settings
from picode.tui.approval import ARM_DELAY_S
from picode.tui.plan_prompt import PlanPrompt
from picode.tui.widgets.markdown import MarkdownView
from picode.tui.widgets.tool_call import ToolCallView
from tests.tui.conftest import SIZE, TuiHarness, notices, opened, run, send, wait_until

PLAN = "# The plan\n\n1. write `out.txt`\n2. **check** it\n\x1b[31mred\x1b[0m"


def _turns() -> list[Any]:
    return [
        tool_turn(FauxToolCall("write", {"path": "out.txt", "content": "hi\n"})),
        tool_turn(FauxToolCall("exit_plan_mode", {"plan": PLAN})),
        tool_turn(FauxToolCall("write", {"path": "out.txt", "content": "hi\n"})),
        text_turn("Done."),
    ]


async def _plan_prompt(pilot: Any, tui: TuiHarness) -> PlanPrompt:
    app = pilot.app
    await wait_until(
        pilot, lambda: isinstance(app.approvals.prompt, PlanPrompt), what="the plan prompt"
    )
    prompt = app.approvals.prompt
    await wait_until(pilot, lambda: prompt.shown_at is not None, what="the prompt drawn")
    tui.clock.advance(ARM_DELAY_S)
    return prompt


def _results(app: Any) -> list[ToolResultMessage]:
    return [m for m in app.session.messages if isinstance(m, ToolResultMessage)]


def test_shift_tab_cycles_the_modes_and_the_footer_shows_them(tui: TuiHarness) -> None:
    app = tui.app(tui.faux(), settings=Settings(approval="edits"))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            thinking = app.session.thinking
            assert "ask edits" in app.info_footer.right_text().plain
            seen = []
            for _ in range(4):
                await pilot.press("shift+tab")
                seen.append(app.session.mode)
                await pilot.pause()
                right = app.info_footer.right_text().plain
                if app.session.mode == "plan":
                    assert "plan mode" in right
                elif app.session.mode == "never":
                    assert "plan" not in right and "ask" not in right
            assert seen == ["never", "plan", "all", "edits"]
            # A run of presses leaves one line saying where it ended.
            mode_lines = [text for text in notices(app) if text.startswith("Mode: ")]
            assert mode_lines == ["Mode: ask before edits"]
            assert app.session.thinking == thinking  # Shift+Tab no longer cycles it

    run(scenario())


def test_slash_plan_toggles_plan_mode(tui: TuiHarness) -> None:
    app = tui.app(tui.faux(), settings=Settings(approval="all"))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "/plan")
            await wait_until(pilot, lambda: app.session.mode == "plan")
            await send(pilot, "/plan")
            await wait_until(pilot, lambda: app.session.mode == "all")  # the policy before
            await send(pilot, "/plan on")
            await wait_until(pilot, lambda: app.session.mode == "plan")
            await send(pilot, "/plan maybe")
            await wait_until(pilot, lambda: any("/plan on" in t for t in notices(app)))
            assert app.session.mode == "plan"

    run(scenario())


def test_approving_the_plan_lets_the_write_run(tui: TuiHarness) -> None:
    app = tui.app(tui.faux(*_turns()))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            app.session.set_mode("plan")
            await send(pilot, "write out.txt")
            prompt = await _plan_prompt(pilot, tui)
            assert app.focused is prompt
            assert prompt.region.bottom <= app.editor.region.y  # above the editor
            (body,) = prompt.query(MarkdownView)
            # Drawn as Markdown, and the model's escape sequence never reaches the terminal.
            assert "\x1b" not in body.source
            drawn = "\n".join(line.body.plain for line in body.lines)
            assert "The plan" in drawn and "# The plan" not in drawn and "**" not in drawn
            assert body.size.height >= 4
            assert not (tui.cwd / "out.txt").exists()
            await pilot.press("y")
            await wait_until(pilot, lambda: not app.session.is_running)
            refused, approved, written = _results(app)
            assert refused.is_error and "plan mode" in refused.text
            assert "approved" in approved.text and not written.is_error
            assert (tui.cwd / "out.txt").read_text() == "hi\n"
            assert app.session.mode == "never"
            assert not app.query(PlanPrompt) and app.focused is app.editor
            assert "plan" not in app.info_footer.right_text().plain
            # In the transcript, Ctrl+O shows the plan drawn as Markdown too.
            (call,) = [v for v in app.query(ToolCallView) if v.tool_name == "exit_plan_mode"]
            assert "The plan" in call.header_text and "#" not in call.header_text
            assert not call.query(MarkdownView)
            await pilot.press("ctrl+o")
            await wait_until(pilot, lambda: bool(call.query(MarkdownView)), what="the plan")
            await pilot.pause()
            shown = "\n".join(line.body.plain for line in call.query_one(MarkdownView).lines)
            assert "The plan" in shown and "#" not in shown and "**" not in shown
            assert "write out.txt" in shown and "\x1b" not in shown

    run(scenario())


def test_feedback_goes_back_to_the_model_and_plan_mode_stays(tui: TuiHarness) -> None:
    faux = tui.faux(
        tool_turn(FauxToolCall("exit_plan_mode", {"plan": PLAN})),
        text_turn("Revising."),
    )
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            app.session.set_mode("plan")
            await send(pilot, "plan it")
            prompt = await _plan_prompt(pilot, tui)
            await pilot.press("f")
            assert app.focused is prompt.feedback_input
            await pilot.press(*"use tabs", "enter")
            await wait_until(pilot, lambda: not app.session.is_running)
            (result,) = _results(app)
            assert "use tabs" in result.text and "still in plan mode" in result.text
            assert app.session.mode == "plan"

    run(scenario())


def test_esc_on_the_plan_cancels_and_stops_the_run(tui: TuiHarness) -> None:
    faux = tui.faux(
        tool_turn(FauxToolCall("exit_plan_mode", {"plan": PLAN})),
        text_turn("never asked for"),
    )
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            app.session.set_mode("plan")
            await send(pilot, "plan it")
            await _plan_prompt(pilot, tui)
            await pilot.press("escape")
            await wait_until(pilot, lambda: not app.session.is_running)
            assert len(faux.requests) == 1
            assert app.session.mode == "plan"
            assert not app.query(PlanPrompt)

    run(scenario())


def test_started_in_plan_mode_the_footer_says_so(tui: TuiHarness) -> None:
    app = tui.app(tui.faux(), options={"plan": True})

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await wait_until(pilot, lambda: "plan mode" in app.info_footer.right_text().plain)
            assert app.session.mode == "plan"

    run(scenario())
