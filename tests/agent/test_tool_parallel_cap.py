"""At most ``max_parallel`` tool calls of one reply execute at once; the rest wait."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from picode.agent.tool import BaseTool, OnUpdate, ToolResult
from picode.ai.abort import AbortSignal
from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.ai.types import ToolResultMessage
from picode.session.config.settings import Settings
from tests.agent.fakes import FakeTextParams, faux, make_agent, run
from tests.session.conftest import SessionHarness


class FakeCountingTool(BaseTool):
    """Counts how many of its calls execute at once; the first ``hold`` wait together."""

    name = "bash"
    label = "Bash"
    description = "Counts concurrency."
    params_model = FakeTextParams

    def __init__(self, hold: int) -> None:
        self.hold = hold
        self.running = 0
        self.peak = 0
        self.calls = 0
        self.enough = asyncio.Event()

    async def run(self, args: Any, signal: AbortSignal, on_update: OnUpdate) -> ToolResult:
        self.running += 1
        self.calls += 1
        self.peak = max(self.peak, self.running)
        if self.running >= self.hold:
            self.enough.set()
        try:
            # Held until as many run at once as the cap allows: without a cap, every call
            # of the reply would be in here at the same time.
            await asyncio.wait_for(self.enough.wait(), 5)
        finally:
            self.running -= 1
        return ToolResult.text("ok")


def hundred_calls() -> Any:
    return tool_turn(*(FauxToolCall("bash", {"text": str(i)}, id=f"c{i}") for i in range(100)))


def test_a_hundred_parallel_calls_run_eight_at_a_time() -> None:
    provider = faux(hundred_calls(), text_turn("done"))
    tool = FakeCountingTool(hold=8)
    agent, _ = make_agent(provider, [tool])
    run(lambda: agent.prompt("go"))
    assert tool.calls == 100
    assert tool.peak == 8
    results = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert [r.tool_call_id for r in results] == [f"c{i}" for i in range(100)]
    assert not any(r.is_error for r in results)


def test_the_session_takes_the_cap_from_the_config(tmp_path: Path) -> None:
    harness = SessionHarness(tmp_path)
    tool = FakeCountingTool(hold=3)
    settings = Settings.model_validate({"tools": {"max_parallel": 3}})

    async def body() -> None:
        provider = harness.faux(hundred_calls(), text_turn("done"))
        session = await harness.open(provider, settings=settings, tools=[tool])
        await session.prompt("go")
        await session.close()

    try:
        asyncio.run(asyncio.wait_for(body(), 20))
    finally:
        harness.close()
    assert tool.calls == 100
    assert tool.peak == 3
