"""``should_stop``: the loop asks before each request that follows tool results alone, and
a message from the person starts the count again."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.ai.types import AssistantMessage, Message, ToolResultMessage, UserMessage
from tests.agent.fakes import (
    FakeEchoTool,
    FakeGatedTool,
    assert_transcript_valid,
    faux,
    make_agent,
    run,
    wait,
)


def _echo_turns(count: int) -> list[object]:
    calls = (FauxToolCall("echo", {"text": f"step {n}"}, id=f"c{n}") for n in range(count))
    return [*(tool_turn(call) for call in calls), text_turn("done")]


def test_the_run_stops_before_the_request_the_limit_refuses() -> None:
    seen: list[tuple[int, list[str]]] = []

    def should_stop(requests: int, recent: Sequence[Message]) -> bool:
        seen.append((requests, [m.role for m in recent]))
        return requests >= 2

    provider = faux(*_echo_turns(4))
    agent, _ = make_agent(provider, [FakeEchoTool()], should_stop=should_stop)
    run(lambda: agent.prompt("go"))

    messages = agent.state.messages
    assert [m.role for m in messages] == [
        "user", "assistant", "toolResult", "assistant", "toolResult",
    ]  # fmt: skip
    assert_transcript_valid(messages)
    # Asked before each request after the first; counted from the person's message.
    assert seen == [
        (0, ["user"]),
        (1, ["user", "assistant", "toolResult"]),
        (2, ["user", "assistant", "toolResult", "assistant", "toolResult"]),
    ]
    assert not agent.is_running
    # The next message goes on where it stopped, with a count of its own.
    run(lambda: agent.prompt("go on"))
    replies = [m for m in agent.state.messages if isinstance(m, AssistantMessage)]
    assert len(replies) == 4
    assert_transcript_valid(agent.state.messages)


def test_a_steering_message_starts_the_count_again() -> None:
    gated = FakeGatedTool("gated")
    provider = faux(
        tool_turn(FauxToolCall("gated", {"text": "x"}, id="g")),
        *_echo_turns(3),
    )
    agent, _ = make_agent(
        provider, [gated, FakeEchoTool()], should_stop=lambda requests, _: requests >= 2
    )

    async def body() -> None:
        running = asyncio.ensure_future(agent.prompt("go"))
        await wait(gated.started, "the gated tool")
        agent.steer("also this")
        gated.release.set()
        await asyncio.wait_for(running, 5)

    run(body)
    messages = agent.state.messages
    assert_transcript_valid(messages)
    steer = next(i for i, m in enumerate(messages) if isinstance(m, UserMessage) and i > 0)
    after = [m for m in messages[steer:] if isinstance(m, AssistantMessage)]
    assert len(after) == 2  # two requests after the steer, not one
    assert isinstance(messages[-1], ToolResultMessage)
