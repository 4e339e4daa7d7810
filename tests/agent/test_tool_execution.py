"""Tool execution: validation, errors, hooks, concurrency and ordering."""

from __future__ import annotations

import asyncio
from typing import Any

from picode.agent.events import (
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
)
from picode.agent.tool import BaseTool, OnUpdate, ToolResult
from picode.agent.tool_exec import TRUNCATED_TOOL_CALL
from picode.ai.abort import AbortSignal
from picode.ai.providers.faux import FauxText, FauxToolCall, FauxTurn, text_turn, tool_turn
from picode.ai.types import ToolCall, ToolResultMessage
from tests.agent.fakes import (
    FakeEchoTool,
    FakeFailingTool,
    FakeFileTool,
    FakeProgressTool,
    FakeTextParams,
    assert_transcript_valid,
    faux,
    make_agent,
    run,
)


def tool_results(messages: list[Any]) -> list[ToolResultMessage]:
    return [m for m in messages if isinstance(m, ToolResultMessage)]


class FakeSlowTool(BaseTool):
    """Finishes only after the fast tool has finished."""

    name = "slow"
    label = "Slow"
    description = "Waits for the fast one."
    params_model = FakeTextParams

    def __init__(self, fast_done: asyncio.Event, log: list[str]) -> None:
        self.fast_done = fast_done
        self.log = log

    async def run(self, args: Any, signal: AbortSignal, on_update: OnUpdate) -> ToolResult:
        self.log.append("slow started")
        await self.fast_done.wait()
        self.log.append("slow finished")
        return ToolResult.text("slow result")


class FakeFastTool(BaseTool):
    name = "fast"
    label = "Fast"
    description = "Returns at once."
    params_model = FakeTextParams

    def __init__(self, fast_done: asyncio.Event, log: list[str]) -> None:
        self.fast_done = fast_done
        self.log = log

    async def run(self, args: Any, signal: AbortSignal, on_update: OnUpdate) -> ToolResult:
        self.log.append("fast started")
        self.log.append("fast finished")
        self.fast_done.set()
        return ToolResult.text("fast result")


def test_parallel_tools_start_together_end_when_done_and_report_in_source_order() -> None:
    provider = faux(
        tool_turn(FauxToolCall("slow", {}, id="a"), FauxToolCall("fast", {}, id="b")),
        text_turn("done"),
    )
    fast_done = asyncio.Event()
    log: list[str] = []
    agent, recorder = make_agent(
        provider, [FakeSlowTool(fast_done, log), FakeFastTool(fast_done, log)]
    )

    run(lambda: agent.prompt("go"))

    # The fast tool really finished first...
    assert log.index("fast finished") < log.index("slow finished")
    tool_events = [
        k for k in recorder.kinds() if k.startswith("tool_execution") or "toolResult" in k
    ]
    # ...both started before either ended; each end comes when it is done (a front end stops
    # showing the fast one as running), the result messages in the model's order.
    assert tool_events == [
        "tool_execution_start:slow",
        "tool_execution_start:fast",
        "tool_execution_end:fast",
        "tool_execution_end:slow",
        "message_start:toolResult",
        "message_end:toolResult",
        "message_start:toolResult",
        "message_end:toolResult",
    ]
    results = tool_results(agent.state.messages)
    assert [(r.tool_call_id, r.text) for r in results] == [
        ("a", "slow result"),
        ("b", "fast result"),
    ]


def test_a_tool_that_raises_becomes_an_error_result_and_the_run_goes_on() -> None:
    provider = faux(tool_turn(FauxToolCall("fail", {"text": "x"})), text_turn("recovered"))
    agent, recorder = make_agent(provider, [FakeFailingTool()])

    run(lambda: agent.prompt("go"))

    (result,) = tool_results(agent.state.messages)
    assert result.is_error
    assert "disk on fire" in result.text
    (end,) = recorder.of(ToolExecutionEnd)
    assert end.is_error and "disk on fire" in end.result.text_content
    assert agent.state.messages[-1].text == "recovered"


def test_invalid_arguments_name_the_field_and_the_tool_does_not_run() -> None:
    provider = faux(
        tool_turn(FauxToolCall("file", {"count": "many"})),
        text_turn("fixed"),
    )
    tool = FakeFileTool()
    agent, _ = make_agent(provider, [tool])

    run(lambda: agent.prompt("go"))

    (result,) = tool_results(agent.state.messages)
    assert result.is_error
    assert "'path' is required" in result.text
    assert "'count'" in result.text
    assert tool.executed == []


def test_arguments_are_coerced_where_safe() -> None:
    provider = faux(
        tool_turn(FauxToolCall("file", {"path": "a.txt", "count": "3"})), text_turn("k")
    )
    tool = FakeFileTool()
    agent, _ = make_agent(provider, [tool])

    run(lambda: agent.prompt("go"))

    assert tool_results(agent.state.messages)[0].text == "a.txt x3"
    assert tool.executed[0].count == 3


def test_unknown_tool_lists_the_available_tools() -> None:
    provider = faux(tool_turn(FauxToolCall("nope", {})), text_turn("sorry"))
    agent, recorder = make_agent(provider, [FakeEchoTool(), FakeFileTool()])

    run(lambda: agent.prompt("go"))

    (result,) = tool_results(agent.state.messages)
    assert result.is_error
    assert result.text == "Tool 'nope' not found. Available tools: echo, file."
    assert [e.tool_name for e in recorder.of(ToolExecutionStart)] == ["nope"]


def test_progress_updates_arrive_between_start_and_end() -> None:
    provider = faux(tool_turn(FauxToolCall("progress", {})), text_turn("ok"))
    agent, recorder = make_agent(provider, [FakeProgressTool()])

    run(lambda: agent.prompt("go"))

    kinds = [k for k in recorder.kinds() if k.startswith("tool_execution")]
    assert kinds == [
        "tool_execution_start:progress",
        "tool_execution_update:progress",
        "tool_execution_update:progress",
        "tool_execution_end:progress",
    ]
    updates = recorder.of(ToolExecutionUpdate)
    assert [u.partial.text_content for u in updates] == ["step 1", "step 2"]
    assert tool_results(agent.state.messages)[0].text == "all steps"


def test_before_hook_can_block_and_after_hook_can_replace() -> None:
    provider = faux(
        tool_turn(
            FauxToolCall("echo", {"text": "rm -rf /"}, id="blocked"),
            FauxToolCall("echo", {"text": "hello"}, id="allowed"),
        ),
        text_turn("ok"),
    )
    echo = FakeEchoTool()
    before_seen: list[tuple[str, Any]] = []
    after_seen: list[tuple[str, str]] = []

    async def before(call: ToolCall, args: Any) -> str | None:
        before_seen.append((call.id, args.text))
        return "Blocked by policy: destructive command" if "rm" in args.text else None

    async def after(call: ToolCall, result: ToolResult) -> ToolResult | None:
        after_seen.append((call.id, result.text_content))
        return ToolResult.text(result.text_content.upper())

    agent, _ = make_agent(provider, [echo], before_tool_call=before, after_tool_call=after)
    run(lambda: agent.prompt("go"))

    blocked, allowed = tool_results(agent.state.messages)
    assert blocked.is_error and blocked.text == "Blocked by policy: destructive command"
    assert allowed.text == "ECHO: HELLO" and not allowed.is_error
    assert echo.calls == ["hello"]
    assert sorted(before_seen) == [("allowed", "hello"), ("blocked", "rm -rf /")]
    assert after_seen == [("allowed", "echo: hello")]


def test_after_hook_returning_none_keeps_the_result() -> None:
    provider = faux(tool_turn(FauxToolCall("echo", {"text": "a"})), text_turn("ok"))

    async def after(call: ToolCall, result: ToolResult) -> ToolResult | None:
        return None

    agent, _ = make_agent(provider, [FakeEchoTool()], after_tool_call=after)
    run(lambda: agent.prompt("go"))
    assert tool_results(agent.state.messages)[0].text == "echo: a"


def test_a_failing_before_hook_blocks_the_call() -> None:
    provider = faux(tool_turn(FauxToolCall("echo", {"text": "a"})), text_turn("ok"))
    echo = FakeEchoTool()

    async def before(call: ToolCall, args: Any) -> str | None:
        raise RuntimeError("policy service down")

    agent, _ = make_agent(provider, [echo], before_tool_call=before)
    run(lambda: agent.prompt("go"))

    (result,) = tool_results(agent.state.messages)
    assert result.is_error and "policy service down" in result.text
    assert echo.calls == []


def test_length_stop_does_not_run_the_truncated_call() -> None:
    provider = faux(
        FauxTurn(
            [
                FauxToolCall("echo", {"text": "complete"}, id="whole"),
                FauxToolCall("echo", '{"text": "cut of', id="cut"),
            ],
            stop_reason="length",
        ),
        text_turn("retrying smaller"),
    )
    echo = FakeEchoTool()
    agent, _ = make_agent(provider, [echo])

    run(lambda: agent.prompt("go"))

    whole, cut = tool_results(agent.state.messages)
    assert (whole.tool_call_id, whole.text, whole.is_error) == ("whole", "echo: complete", False)
    assert (cut.tool_call_id, cut.text, cut.is_error) == ("cut", TRUNCATED_TOOL_CALL, True)
    assert echo.calls == ["complete"]
    # The model gets to react to the cut-off call.
    assert len(provider.requests) == 2
    assert_transcript_valid(agent.state.messages)


def test_length_stop_after_text_runs_complete_calls() -> None:
    provider = faux(
        FauxTurn(
            [FauxToolCall("echo", {"text": "a"}), FauxText("and then I was cut")],
            stop_reason="length",
        ),
        text_turn("ok"),
    )
    echo = FakeEchoTool()
    agent, _ = make_agent(provider, [echo])
    run(lambda: agent.prompt("go"))
    assert echo.calls == ["a"]
    assert not tool_results(agent.state.messages)[0].is_error
