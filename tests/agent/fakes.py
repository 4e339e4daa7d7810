"""Test doubles for the agent tests: tools whose progress the test can observe and steer."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from picode.agent.agent import Agent
from picode.agent.events import AgentEvent, MessageUpdate
from picode.agent.tool import BaseTool, OnUpdate, StrictParams, ToolResult
from picode.ai.abort import AbortSignal
from picode.ai.providers.faux import FauxProvider, FauxScript
from picode.ai.types import AssistantMessage, Message, ToolResultMessage
from tests.support import run as run

WAIT = 5.0  # generous: these waits only fail when something is broken


async def wait(event: asyncio.Event, what: str = "event") -> None:
    try:
        await asyncio.wait_for(event.wait(), WAIT)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


class FakeTextParams(StrictParams):
    text: str = ""


class FakeEchoTool(BaseTool):
    name = "echo"
    label = "Echo"
    description = "Repeat the text."
    params_model = FakeTextParams

    def __init__(self, name: str = "echo") -> None:
        self.name = name  # type: ignore[misc]
        self.calls: list[str] = []

    async def run(self, args: Any, signal: AbortSignal, on_update: OnUpdate) -> ToolResult:
        self.calls.append(args.text)
        return ToolResult.text(f"echo: {args.text}", details={"length": len(args.text)})


class FakeFileParams(StrictParams):
    path: str
    count: int = 1


class FakeFileTool(BaseTool):
    """Only here for its schema: a required field and an integer."""

    name = "file"
    label = "File"
    description = "Pretend to read a file."
    params_model = FakeFileParams

    def __init__(self) -> None:
        self.executed: list[FakeFileParams] = []

    async def run(self, args: Any, signal: AbortSignal, on_update: OnUpdate) -> ToolResult:
        self.executed.append(args)
        return ToolResult.text(f"{args.path} x{args.count}")


class FakeFailingTool(BaseTool):
    name = "fail"
    label = "Fail"
    description = "Always raises."
    params_model = FakeTextParams

    async def run(self, args: Any, signal: AbortSignal, on_update: OnUpdate) -> ToolResult:
        raise RuntimeError("disk on fire")


class FakeGatedTool(BaseTool):
    """Runs until ``release`` is set (returning ``result_text``) or its signal fires.

    ``started`` is set when it begins; ``signal_seen`` by its abort callback.
    ``ignore_signal`` makes it keep waiting after an abort, like a stubborn tool.
    """

    label = "Gated"
    description = "Waits for the test."
    params_model = FakeTextParams

    def __init__(
        self, name: str, result_text: str = "released", *, ignore_signal: bool = False
    ) -> None:
        self.name = name  # type: ignore[misc]
        self.result_text = result_text
        self.ignore_signal = ignore_signal
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.signal_seen = asyncio.Event()
        self.finished = asyncio.Event()
        self.runs = 0

    async def run(self, args: Any, signal: AbortSignal, on_update: OnUpdate) -> ToolResult:
        self.runs += 1
        signal.add_callback(lambda _reason: self.signal_seen.set())
        self.started.set()
        if self.ignore_signal:
            await self.release.wait()
        else:
            release = asyncio.ensure_future(self.release.wait())
            aborted = asyncio.ensure_future(signal.wait())
            try:
                await asyncio.wait({release, aborted}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                release.cancel()
                aborted.cancel()
            if signal.aborted:
                return ToolResult.text("stopped by signal", is_error=True)
        self.finished.set()
        return ToolResult.text(self.result_text)


class FakeProgressTool(BaseTool):
    name = "progress"
    label = "Progress"
    description = "Reports two partial results."
    params_model = FakeTextParams

    async def run(self, args: Any, signal: AbortSignal, on_update: OnUpdate) -> ToolResult:
        on_update(ToolResult.text("step 1"))
        await asyncio.sleep(0)
        on_update(ToolResult.text("step 2"))
        return ToolResult.text("all steps")


class FakeListener:
    """Stands in for an agent's subscriber (the session): keeps every event."""

    def __init__(self) -> None:
        self.events: list[AgentEvent] = []

    def __call__(self, event: AgentEvent) -> None:
        self.events.append(event)

    def kinds(self) -> list[str]:
        return [describe(event) for event in self.events]

    def of(self, kind: type) -> list[Any]:
        return [event for event in self.events if isinstance(event, kind)]


def describe(event: AgentEvent) -> str:
    """``message_start:user``, ``message_update:text_delta``, ``tool_execution_end:echo``."""
    if isinstance(event, MessageUpdate):
        return f"message_update:{event.event.type}"
    message = getattr(event, "message", None)
    if event.type in ("message_start", "message_end") and message is not None:
        return f"{event.type}:{message.role}"
    tool_name = getattr(event, "tool_name", None)
    if tool_name is not None:
        return f"{event.type}:{tool_name}"
    return event.type


def make_agent(
    provider: FauxProvider, tools: Sequence[BaseTool] = (), **kwargs: Any
) -> tuple[Agent, FakeListener]:
    agent = Agent(model=provider.model, tools=tools, **kwargs)
    recorder = FakeListener()
    agent.subscribe(recorder)
    return agent, recorder


OPEN_PROVIDERS: list[FauxProvider] = []


def faux(*turns: FauxScript, **kwargs: Any) -> FauxProvider:
    """A scripted provider (closed after the test); one delta per block unless chunked."""
    kwargs.setdefault("chunk_size", 1000)
    provider = FauxProvider(turns, **kwargs)
    OPEN_PROVIDERS.append(provider)
    return provider


def assert_transcript_valid(messages: Sequence[Message]) -> None:
    """Every tool call is answered by a result before the next assistant message."""
    open_calls: dict[str, str] = {}
    for message in messages:
        if isinstance(message, AssistantMessage):
            assert not open_calls, f"tool calls without results: {sorted(open_calls)}"
            open_calls = {call.id: call.name for call in message.tool_calls}
        elif isinstance(message, ToolResultMessage):
            assert message.tool_call_id in open_calls, f"orphan result {message.tool_call_id}"
            del open_calls[message.tool_call_id]
    assert not open_calls, f"tool calls without results: {sorted(open_calls)}"
