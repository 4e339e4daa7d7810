"""Steering, follow-ups, queue modes, busy prompts and continue."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from picode.agent.agent import Agent, AgentBusyError, AgentError
from picode.agent.events import AgentEnd, AgentEvent, AgentStart, MessageStart
from picode.agent.tool_exec import SKIPPED_FOR_STEERING
from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.ai.types import AssistantMessage, ImageContent, ToolCall, ToolResultMessage, UserMessage
from tests.agent.fakes import (
    FakeEchoTool,
    FakeGatedTool,
    assert_transcript_valid,
    faux,
    make_agent,
    run,
    wait,
)


def on_first_assistant_start(agent: Agent, action: Callable[[], None]) -> None:
    done = False

    def listener(event: AgentEvent) -> None:
        nonlocal done
        if not done and isinstance(event, MessageStart) and event.message.role == "assistant":
            done = True
            action()

    agent.subscribe(listener)


def test_steering_skips_the_tools_still_running_and_is_delivered_next() -> None:
    provider = faux(
        tool_turn(
            FauxToolCall("first", {}, id="t1"),
            FauxToolCall("second", {}, id="t2"),
            FauxToolCall("third", {}, id="t3"),
        ),
        text_turn("changing course"),
    )
    first = FakeGatedTool("first", "first result")
    second = FakeGatedTool("second")
    third = FakeGatedTool("third", ignore_signal=True)
    agent, recorder = make_agent(provider, [first, second, third])

    async def body() -> None:
        prompt = asyncio.ensure_future(agent.prompt("do three things"))
        for tool in (first, second, third):
            await wait(tool.started, tool.name)
        agent.steer("stop, do something else")
        assert [m.text for m in agent.queued_steering] == ["stop, do something else"]
        first.release.set()
        await wait(second.signal_seen, "second tool's signal")
        await wait(third.signal_seen, "third tool's signal")
        await asyncio.wait_for(prompt, 5)

    run(body)

    results = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert [(r.tool_call_id, r.text, r.is_error) for r in results] == [
        ("t1", "first result", False),
        ("t2", SKIPPED_FOR_STEERING, True),
        ("t3", SKIPPED_FOR_STEERING, True),
    ]
    roles = [m.role for m in agent.state.messages]
    assert roles == [
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        "toolResult",
        "user",
        "assistant",
    ]
    steering = agent.state.messages[5]
    assert steering.text == "stop, do something else"
    # The next request ends with the steering message.
    assert provider.requests[1].messages[-1] is steering
    assert agent.queued_steering == []
    assert_transcript_valid(agent.state.messages)
    kinds = recorder.kinds()
    # The steering message opens the second turn.
    second_turn = kinds.index("turn_start", 1)
    assert kinds[second_turn + 1 : second_turn + 3] == ["message_start:user", "message_end:user"]
    assert len(recorder.of(AgentStart)) == len(recorder.of(AgentEnd)) == 1


def test_steering_after_a_text_only_turn_starts_another_turn() -> None:
    provider = faux(text_turn("first answer"), text_turn("second answer"))
    agent, _ = make_agent(provider)
    on_first_assistant_start(agent, lambda: agent.steer("also this"))

    run(lambda: agent.prompt("q"))

    assert [m.text for m in agent.state.messages] == [
        "q",
        "first answer",
        "also this",
        "second answer",
    ]


def test_follow_up_runs_only_when_the_agent_would_stop() -> None:
    provider = faux(
        tool_turn(FauxToolCall("echo", {"text": "a"})),
        text_turn("tool done"),
        text_turn("follow-up answered"),
    )
    agent, recorder = make_agent(provider, [FakeEchoTool()])
    on_first_assistant_start(agent, lambda: agent.follow_up("and one more thing"))

    run(lambda: agent.prompt("q"))

    texts = [(m.role, m.text) for m in agent.state.messages]
    assert texts == [
        ("user", "q"),
        ("assistant", ""),
        ("toolResult", "echo: a"),
        ("assistant", "tool done"),
        ("user", "and one more thing"),
        ("assistant", "follow-up answered"),
    ]
    (end,) = recorder.of(AgentEnd)
    assert end.messages == agent.state.messages


@pytest.mark.parametrize(
    ("mode", "expected_requests"),
    [
        ("one-at-a-time", [["q", "a1", "s1"], ["q", "a1", "s1", "a2", "s2"]]),
        ("all", [["q", "a1", "s1", "s2"]]),
    ],
)
def test_steering_modes(mode: str, expected_requests: list[list[str]]) -> None:
    provider = faux(text_turn("a1"), text_turn("a2"), text_turn("a3"))
    agent, _ = make_agent(provider, steering_mode=mode)

    def queue_two() -> None:
        agent.steer("s1")
        agent.steer("s2")

    on_first_assistant_start(agent, queue_two)
    run(lambda: agent.prompt("q"))

    later = [[m.text for m in r.messages] for r in provider.requests[1:]]
    assert later == expected_requests
    assert agent.queued_steering == []


@pytest.mark.parametrize(
    ("mode", "expected_requests"),
    [
        ("one-at-a-time", [["q", "a1", "f1"], ["q", "a1", "f1", "a2", "f2"]]),
        ("all", [["q", "a1", "f1", "f2"]]),
    ],
)
def test_follow_up_modes(mode: str, expected_requests: list[list[str]]) -> None:
    provider = faux(text_turn("a1"), text_turn("a2"), text_turn("a3"))
    agent, _ = make_agent(provider, follow_up_mode=mode)

    def queue_two() -> None:
        agent.follow_up("f1")
        agent.follow_up(UserMessage("f2"))

    on_first_assistant_start(agent, queue_two)
    run(lambda: agent.prompt("q"))

    later = [[m.text for m in r.messages] for r in provider.requests[1:]]
    assert later == expected_requests


def test_prompt_while_busy_raises_unless_queued() -> None:
    provider = faux(text_turn("a1"), text_turn("a2"))
    agent, _ = make_agent(provider)
    outcome: list[object] = []

    async def try_prompts() -> None:
        try:
            await agent.prompt("too soon")
        except AgentBusyError as exc:
            outcome.append(str(exc))
        await agent.prompt("later, please", queue_if_busy=True)
        outcome.append("queued")

    def on_event(event: AgentEvent) -> asyncio.Future[None] | None:
        if isinstance(event, MessageStart) and event.message.role == "assistant" and not outcome:
            return asyncio.ensure_future(try_prompts())
        return None

    agent.subscribe(on_event)
    run(lambda: agent.prompt("first"))

    assert "still running" in str(outcome[0])
    assert outcome[1] == "queued"
    assert [m.text for m in agent.state.messages] == ["first", "a1", "later, please", "a2"]


def test_clear_queues_returns_what_was_queued() -> None:
    provider = faux()
    agent = Agent(model=provider.model)
    agent.steer("s")
    agent.follow_up("f")
    steering, follow_ups = agent.clear_queues()
    assert [m.text for m in steering] == ["s"]
    assert [m.text for m in follow_ups] == ["f"]
    assert agent.queued_steering == [] and agent.queued_follow_ups == []
    copy = agent.queued_steering
    copy.append(UserMessage("not queued"))
    assert agent.queued_steering == []


def test_empty_or_wrong_messages_are_rejected_clearly() -> None:
    provider = faux()
    agent = Agent(model=provider.model)
    with pytest.raises(ValueError, match="empty"):
        agent.steer("  ")
    with pytest.raises(ValueError, match="empty"):
        run(lambda: agent.prompt(""))
    with pytest.raises(ValueError, match="Images can only"):
        run(lambda: agent.prompt([UserMessage("x")], images=[ImageContent("aGk=", "image/png")]))
    with pytest.raises(ValueError, match="thinking level"):
        agent.set_thinking("extreme")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Duplicate tool name"):
        agent.set_tools([FakeEchoTool(), FakeEchoTool()])
    with pytest.raises(ValueError, match="steering_mode"):
        Agent(model=provider.model, steering_mode="some")  # type: ignore[arg-type]
    assert agent.state.messages == []


def test_prompt_with_images_and_message_lists() -> None:
    provider = faux(text_turn("seen"), text_turn("seen again"))
    agent = Agent(model=provider.model)
    image = ImageContent("aGk=", "image/png")

    run(lambda: agent.prompt("what is this?", images=[image]))
    sent = provider.requests[0].messages[0]
    assert isinstance(sent, UserMessage) and isinstance(sent.content, list)
    assert sent.text == "what is this?" and sent.content[1] is image

    run(lambda: agent.prompt([UserMessage("one"), UserMessage("two")]))
    assert [m.text for m in provider.requests[1].messages[-2:]] == ["one", "two"]


def test_continue_from_a_tool_result_tail() -> None:
    provider = faux(text_turn("continued"))
    history = [
        UserMessage("q"),
        AssistantMessage(
            [ToolCall("c1", "echo", {"text": "x"})],
            provider.api,
            "faux",
            "faux-1",
            stop_reason="toolUse",
        ),
        ToolResultMessage("c1", "echo", [], is_error=False),
    ]
    agent, recorder = make_agent(provider, messages=history)

    run(agent.continue_)

    assert provider.requests[0].messages == history
    assert agent.state.messages[-1].text == "continued"
    assert recorder.kinds()[:3] == ["agent_start", "turn_start", "message_start:assistant"]


def test_continue_refuses_when_there_is_nothing_to_answer() -> None:
    provider = faux(text_turn("from queue"))
    agent = Agent(model=provider.model)
    with pytest.raises(AgentError, match="no messages"):
        run(agent.continue_)
    agent.replace_messages([UserMessage("q"), AssistantMessage([], provider.api, "faux", "faux-1")])
    with pytest.raises(AgentError, match="nothing is queued"):
        run(agent.continue_)
    agent.follow_up("queued question")
    run(agent.continue_)
    assert [m.text for m in agent.state.messages[-2:]] == ["queued question", "from queue"]


def test_commands_that_need_an_idle_agent_refuse_while_running() -> None:
    provider = faux(text_turn("a"))
    agent, _ = make_agent(provider)
    errors: list[str] = []

    def on_event(event: AgentEvent) -> None:
        if isinstance(event, MessageStart) and event.message.role == "assistant":
            for command in (
                lambda: agent.replace_messages([]),
                lambda: agent.append_message(UserMessage("x")),
            ):
                try:
                    command()
                except AgentBusyError as exc:
                    errors.append(str(exc))

    agent.subscribe(on_event)
    run(lambda: agent.prompt("q"))
    assert len(errors) == 2
    assert [m.text for m in agent.state.messages] == ["q", "a"]


def test_wait_for_idle_and_a_new_run_started_from_agent_end() -> None:
    provider = faux(text_turn("a1"), text_turn("a2"))
    agent, recorder = make_agent(provider)
    started_second: list[asyncio.Task[None]] = []

    def on_end(event: AgentEvent) -> None:
        if isinstance(event, AgentEnd) and not started_second:
            assert not agent.is_running
            started_second.append(asyncio.ensure_future(agent.prompt("again")))

    agent.subscribe(on_end)

    async def body() -> None:
        await agent.prompt("q")
        await asyncio.wait_for(agent.wait_for_idle(), 5)
        assert started_second[0].done()

    run(body)

    assert [m.text for m in agent.state.messages] == ["q", "a1", "again", "a2"]
    assert len(recorder.of(AgentEnd)) == 2
    assert not agent.is_running


def test_prompt_after_prompt_keeps_history() -> None:
    provider = faux(text_turn("a1"), text_turn("a2"))
    agent, _ = make_agent(provider)
    run(lambda: agent.prompt("q1"))
    run(lambda: agent.prompt("q2"))
    assert [m.text for m in provider.requests[1].messages] == ["q1", "a1", "q2"]
    assert isinstance(agent.state.messages[-1], AssistantMessage)
