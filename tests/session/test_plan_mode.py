"""Plan mode: only read-only tools run until the person approves the plan of exit_plan_mode."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from picode.agent.events import ToolExecutionEnd
from picode.agent.file_blocks import split_attachments
from picode.agent.tool import is_read_only
from picode.ai.providers.faux import FauxToolCall, FauxTurn, text_turn, tool_turn
from picode.ai.types import TextContent, ToolResultMessage, UserMessage
from picode.session.events import ModeChanged
from picode.session.safety.approval import ApprovalDecision, ApprovalRequest
from picode.session.safety.plan_mode import (
    EXIT_PLAN_MODE,
    MODE_CYCLE,
    NO_APPROVER,
    NOT_IN_PLAN_MODE,
    PlanDecision,
    PlanRequest,
)
from picode.tools import coding_tools

from .conftest import SessionHarness, run

PLAN = "# Plan\n\n1. write `out.txt`"


def _results(messages: list[object]) -> list[ToolResultMessage]:
    return [m for m in messages if isinstance(m, ToolResultMessage)]


def _write(name: str = "out.txt") -> FauxToolCall:
    return FauxToolCall("write", {"path": name, "content": "hello\n"})


def test_read_only_is_what_a_tool_declares(tmp_path: Path) -> None:
    tools = {tool.name: tool for tool in coding_tools(tmp_path)}
    assert {name for name, tool in tools.items() if is_read_only(tool)} == {
        "read",
        "grep",
        "find",
        "ls",
        "todo",
    }
    assert not is_read_only(object())


def test_plan_mode_refuses_write_until_the_plan_is_approved(harness: SessionHarness) -> None:
    asked: list[PlanRequest] = []

    async def approve(request: PlanRequest) -> PlanDecision:
        asked.append(request)
        return PlanDecision("approve", "edits")

    approvals: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> ApprovalDecision:
        approvals.append(request)
        return ApprovalDecision("yes")

    (harness.cwd / "notes.txt").write_text("notes\n")
    faux = harness.faux(
        tool_turn(FauxToolCall("read", {"path": "notes.txt"}), _write()),
        tool_turn(FauxToolCall("bash", {"command": "touch made-by-bash"})),
        tool_turn(FauxToolCall("edit", {"path": "notes.txt", "old_text": "n", "new_text": "N"})),
        tool_turn(FauxToolCall(EXIT_PLAN_MODE, {"plan": PLAN})),
        tool_turn(_write()),
        text_turn("done"),
    )

    async def scenario() -> None:
        session = await harness.open(faux, approver=approver)
        session.set_plan_approver(approve)
        session.set_mode("plan")
        assert session.mode == "plan"
        await session.prompt("make out.txt")
        read, write, bash, edit, exit_plan, write_again = _results(session.messages)
        assert not read.is_error and "notes" in read.text
        for refused in (write, bash, edit):
            assert refused.is_error and "plan mode" in refused.text
            assert EXIT_PLAN_MODE in refused.text
        assert not (harness.cwd / "made-by-bash").exists()
        assert (harness.cwd / "notes.txt").read_text() == "notes\n"
        assert not exit_plan.is_error and "approved" in exit_plan.text
        assert [r.plan for r in asked] == [PLAN]
        assert asked[0].call_id == exit_plan.tool_call_id
        # Approved "asking for edits": out of plan mode, and the write is asked about.
        assert session.mode == "edits"
        assert not write_again.is_error
        assert (harness.cwd / "out.txt").read_text() == "hello\n"
        assert [r.tool_name for r in approvals] == ["write"]
        assert [e.mode for e in harness.of_type(ModeChanged)] == ["plan", "edits"]
        await session.close()

    run(scenario())


def test_feedback_keeps_planning_with_the_persons_words(harness: SessionHarness) -> None:
    decisions = [
        PlanDecision("feedback", feedback="also update the README"),
        PlanDecision("approve"),
    ]

    async def answer(request: PlanRequest) -> PlanDecision:
        return decisions.pop(0)

    faux = harness.faux(
        tool_turn(FauxToolCall(EXIT_PLAN_MODE, {"plan": PLAN})),
        tool_turn(_write()),
        tool_turn(FauxToolCall(EXIT_PLAN_MODE, {"plan": PLAN + "\n2. README"})),
        tool_turn(_write()),
        text_turn("done"),
    )

    async def scenario() -> None:
        session = await harness.open(faux)
        session.set_plan_approver(answer)
        session.set_mode("plan")
        await session.prompt("go")
        first, refused, second, written = _results(session.messages)
        assert "also update the README" in first.text and "still in plan mode" in first.text
        assert refused.is_error and "plan mode" in refused.text
        assert not second.is_error and "approved" in second.text
        assert not written.is_error and (harness.cwd / "out.txt").exists()
        assert session.mode == "never"  # approved with edits run at once
        await session.close()

    run(scenario())


def test_cancel_stops_the_run_and_plan_mode_stays(harness: SessionHarness) -> None:
    async def cancel(request: PlanRequest) -> PlanDecision:
        return PlanDecision("cancel")

    faux = harness.faux(
        tool_turn(FauxToolCall(EXIT_PLAN_MODE, {"plan": PLAN})),
        tool_turn(_write()),
    )

    async def scenario() -> None:
        session = await harness.open(faux)
        session.set_plan_approver(cancel)
        session.set_mode("plan")
        await asyncio.wait_for(session.prompt("go"), 10)
        assert session.mode == "plan"
        assert len(faux.requests) == 1  # nothing asked of the model after the cancel
        assert not (harness.cwd / "out.txt").exists()
        (result,) = _results(session.messages)
        assert result.tool_name == EXIT_PLAN_MODE and result.is_error  # settled as aborted
        await session.close()

    run(scenario())


def test_without_an_approver_plan_mode_stays_and_the_model_ends_with_the_plan(
    harness: SessionHarness,
) -> None:
    faux = harness.faux(tool_turn(FauxToolCall(EXIT_PLAN_MODE, {"plan": PLAN})), text_turn(PLAN))

    async def scenario() -> None:
        session = await harness.open(faux)
        session.set_mode("plan")
        await session.prompt("go")
        (result,) = _results(session.messages)
        assert result.text == NO_APPROVER
        assert session.mode == "plan"
        await session.close()

    run(scenario())


def test_exit_plan_mode_outside_plan_mode_is_a_short_note(harness: SessionHarness) -> None:
    asked: list[PlanRequest] = []

    async def answer(request: PlanRequest) -> PlanDecision:
        asked.append(request)
        return PlanDecision("approve")

    faux = harness.faux(tool_turn(FauxToolCall(EXIT_PLAN_MODE, {"plan": PLAN})), text_turn("ok"))

    async def scenario() -> None:
        session = await harness.open(faux)
        session.set_plan_approver(answer)
        await session.prompt("go")
        (result,) = _results(session.messages)
        assert result.text == NOT_IN_PLAN_MODE and not asked
        await session.close()

    run(scenario())


def test_the_model_is_told_once_when_plan_mode_goes_on_and_off(harness: SessionHarness) -> None:
    faux = harness.faux(text_turn("a"), text_turn("b"), text_turn("c"))

    def notes(message: object) -> list[str]:
        assert isinstance(message, UserMessage) and not isinstance(message.content, str)
        return [b.text for b in message.content[1:] if isinstance(b, TextContent)]

    async def scenario() -> None:
        session = await harness.open(faux)
        session.set_mode("plan")
        await session.prompt("first")
        await session.prompt("second")
        session.set_mode("edits")
        await session.prompt("third")
        users = [m for m in session.messages if isinstance(m, UserMessage)]
        assert "Plan mode is on" in notes(users[0])[0]
        assert users[1].content == "second"
        assert "Plan mode is off" in notes(users[2])[0]
        # The note is for the model: the message reads as typed everywhere else.
        assert split_attachments(users[0]) == ("first", [])
        assert "Plan mode" in str(faux.requests[0].messages[-1].content)
        # The tools offered never change with the mode (the prompt cache stays).
        assert faux.requests[0].tool_names == faux.requests[2].tool_names
        assert EXIT_PLAN_MODE in faux.requests[0].tool_names
        await session.close()

    run(scenario())


def test_cycle_and_set_mode(harness: SessionHarness) -> None:
    faux = harness.faux()

    async def scenario() -> None:
        session = await harness.open(faux, approval="edits")
        seen = [session.cycle_mode() for _ in MODE_CYCLE]
        assert seen == ["never", "plan", "all", "edits"]
        with pytest.raises(ValueError, match="unknown mode"):
            session.set_mode("yolo")
        assert session.mode == "edits"
        await session.close()

    run(scenario())


def test_a_mode_change_mid_run_applies_to_the_next_call(harness: SessionHarness) -> None:
    faux = harness.faux(
        FauxTurn([_write("one.txt")]),
        FauxTurn([_write("two.txt")]),
        text_turn("done"),
    )

    async def scenario() -> None:
        session = await harness.open(faux)
        seen = asyncio.Event()

        def on_event(event: object) -> None:
            # After the first call ends: the second call of the run meets plan mode.
            if isinstance(event, ToolExecutionEnd) and not seen.is_set():
                session.set_mode("plan")
                seen.set()

        session.subscribe(on_event)
        await session.prompt("go")
        one, two = _results(session.messages)
        assert not one.is_error and two.is_error and "plan mode" in two.text
        await session.close()

    run(scenario())


def test_any_tool_that_declares_itself_read_only_runs_in_plan_mode(
    harness: SessionHarness,
) -> None:
    from picode.agent.tool import FunctionTool, ToolResult

    async def answer(args: dict[str, object], signal: object, on_update: object) -> ToolResult:
        return ToolResult.text("ran")

    def tool(name: str, *, read_only: bool) -> FunctionTool:
        schema = {"type": "object", "properties": {}}
        return FunctionTool(name, name, name, schema, answer, read_only=read_only)  # type: ignore[arg-type]

    faux = harness.faux(
        tool_turn(FauxToolCall("looks", {}), FauxToolCall("touches", {})), text_turn("ok")
    )

    async def scenario() -> None:
        tools = [*coding_tools(harness.cwd), tool("looks", read_only=True)]
        session = await harness.open(faux, tools=[*tools, tool("touches", read_only=False)])
        session.set_mode("plan")
        await session.prompt("go")
        looks, touches = _results(session.messages)
        assert looks.text == "ran" and not looks.is_error
        assert touches.is_error and "plan mode" in touches.text
        await session.close()

    run(scenario())


def test_a_new_conversation_in_plan_mode_is_told_again(harness: SessionHarness) -> None:
    faux = harness.faux(text_turn("a"), text_turn("b"))

    async def scenario() -> None:
        session = await harness.open(faux)
        session.set_mode("plan")
        await session.prompt("first")
        await session.new_session()
        await session.prompt("in the new one")
        (user,) = [m for m in session.messages if isinstance(m, UserMessage)]
        assert "Plan mode is on" in str(user.content)
        await session.close()

    run(scenario())


def test_after_an_approved_plan_no_note_repeats_what_the_result_said(
    harness: SessionHarness,
) -> None:
    async def approve(request: PlanRequest) -> PlanDecision:
        return PlanDecision("approve")

    faux = harness.faux(
        tool_turn(FauxToolCall(EXIT_PLAN_MODE, {"plan": PLAN})), text_turn("done"), text_turn("b")
    )

    async def scenario() -> None:
        session = await harness.open(faux)
        session.set_plan_approver(approve)
        session.set_mode("plan")
        await session.prompt("plan")
        await session.prompt("next")
        assert session.messages[-2].content == "next"  # no "plan mode is off" note
        await session.close()

    run(scenario())
