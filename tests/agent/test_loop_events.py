"""Event sequences of the agent loop with the scripted provider."""

from __future__ import annotations

import asyncio
import logging

import pytest

from picode.agent.agent import Agent
from picode.agent.events import (
    AgentEnd,
    AgentEvent,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    TurnEnd,
)
from picode.ai.events import ErrorEvent
from picode.ai.models import Model
from picode.ai.options import StreamOptions
from picode.ai.providers.faux import FauxText, FauxToolCall, FauxTurn, text_turn, tool_turn
from picode.ai.types import AssistantMessage, Context, UserMessage
from tests.agent.fakes import FakeEchoTool, FakeListener, faux, make_agent, run

TEXT_TURN_EVENTS = [
    "message_start:assistant",
    "message_update:text_start",
    "message_update:text_delta",
    "message_update:text_end",
    "message_end:assistant",
]


def test_text_only_run_emits_the_exact_sequence() -> None:
    provider = faux(text_turn("Hello there"))
    agent, recorder = make_agent(provider)

    run(lambda: agent.prompt("hi"))

    assert recorder.kinds() == [
        "agent_start",
        "turn_start",
        "message_start:user",
        "message_end:user",
        *TEXT_TURN_EVENTS,
        "turn_end",
        "agent_end",
    ]
    user, assistant = agent.state.messages
    assert isinstance(user, UserMessage) and user.content == "hi"
    assert isinstance(assistant, AssistantMessage)
    assert assistant.text == "Hello there"
    assert assistant.stop_reason == "stop"
    (end,) = recorder.of(AgentEnd)
    assert end.messages == [user, assistant]
    assert not agent.is_running
    assert agent.state.streaming_message is None
    assert agent.state.error is None


def test_one_tool_call_emits_the_exact_sequence() -> None:
    provider = faux(tool_turn(FauxToolCall("echo", {"text": "ping"}, id="c1")), text_turn("ok"))
    echo = FakeEchoTool()
    agent, recorder = make_agent(provider, [echo])

    run(lambda: agent.prompt("use the tool"))

    assert recorder.kinds() == [
        "agent_start",
        "turn_start",
        "message_start:user",
        "message_end:user",
        "message_start:assistant",
        "message_update:toolcall_start",
        "message_update:toolcall_delta",
        "message_update:toolcall_end",
        "message_end:assistant",
        "tool_execution_start:echo",
        "tool_execution_end:echo",
        "message_start:toolResult",
        "message_end:toolResult",
        "turn_end",
        "turn_start",
        *TEXT_TURN_EVENTS,
        "turn_end",
        "agent_end",
    ]
    assert echo.calls == ["ping"]
    roles = [message.role for message in agent.state.messages]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    result = agent.state.messages[2]
    assert result.tool_call_id == "c1"  # type: ignore[union-attr]
    assert result.text == "echo: ping"
    assert result.details == {"length": 4}  # type: ignore[union-attr]
    # The second request carried the tool result back to the model.
    assert [m.role for m in provider.requests[1].messages] == ["user", "assistant", "toolResult"]
    first_turn_end = recorder.of(TurnEnd)[0]
    assert first_turn_end.tool_results == [result]


def test_message_updates_carry_the_raw_event_and_the_live_partial() -> None:
    provider = faux(FauxTurn([FauxText("abcdefgh")]), chunk_size=2)
    agent, recorder = make_agent(provider)
    snapshots: list[str] = []
    agent.subscribe(
        lambda e: snapshots.append(e.message.text) if isinstance(e, MessageUpdate) else None
    )

    run(lambda: agent.prompt("go"))

    updates = recorder.of(MessageUpdate)
    assert {u.event.type for u in updates} >= {"text_start", "text_delta", "text_end"}
    assert all(u.message is u.event.partial for u in updates)
    deltas = "".join(u.event.delta for u in updates if u.event.type == "text_delta")
    assert deltas == "abcdefgh"
    assert snapshots[-1] == "abcdefgh"


def test_pre_stream_error_shows_only_the_error_message() -> None:
    provider = faux(FauxTurn(error="401 Unauthorized: bad key", error_before_stream=True))
    agent, recorder = make_agent(provider)

    run(lambda: agent.prompt("hi"))

    assert recorder.kinds() == [
        "agent_start",
        "turn_start",
        "message_start:user",
        "message_end:user",
        "message_start:assistant",
        "message_end:assistant",
        "turn_end",
        "agent_end",
    ]
    start = recorder.of(MessageStart)[1]
    end = recorder.of(MessageEnd)[1]
    # Never a half message: what starts is already the final error message.
    assert start.message is end.message
    assert end.message.stop_reason == "error"
    assert end.message.content == []
    assert agent.state.error == "401 Unauthorized: bad key"


def test_mid_stream_error_keeps_the_partial_content() -> None:
    provider = faux(FauxTurn([FauxText("half an ans")], error="connection reset"))
    agent, recorder = make_agent(provider)

    run(lambda: agent.prompt("hi"))

    final = agent.state.messages[-1]
    assert isinstance(final, AssistantMessage)
    assert final.stop_reason == "error"
    assert final.error_message == "connection reset"
    assert final.text == "half an ans"
    kinds = recorder.kinds()
    assert kinds.index("message_update:text_delta") < kinds.index("message_end:assistant")
    assert agent.state.error == "connection reset"


def test_stream_fn_failure_becomes_an_error_message() -> None:
    def broken_stream(model: Model, context: Context, options: StreamOptions) -> object:
        raise ValueError("No provider for API 'nowhere'")

    provider = faux()
    agent, recorder = make_agent(provider, stream_fn=broken_stream)  # type: ignore[arg-type]

    run(lambda: agent.prompt("hi"))

    final = agent.state.messages[-1]
    assert isinstance(final, AssistantMessage)
    assert final.stop_reason == "error"
    assert "No provider for API 'nowhere'" in (final.error_message or "")
    assert recorder.kinds()[-4:] == [
        "message_start:assistant",
        "message_end:assistant",
        "turn_end",
        "agent_end",
    ]


def test_an_error_stops_the_run_even_with_follow_ups_queued() -> None:
    provider = faux(FauxTurn(error="boom", error_before_stream=True), text_turn("later"))
    agent, _ = make_agent(provider)
    agent.follow_up("next")

    run(lambda: agent.prompt("hi"))

    assert len(provider.requests) == 1
    assert [m.text for m in agent.queued_follow_ups] == ["next"]


def test_listener_exceptions_are_logged_and_do_not_break_the_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    provider = faux(text_turn("fine"))
    agent = Agent(model=provider.model)

    def broken(event: AgentEvent) -> None:
        raise RuntimeError("listener bug")

    agent.subscribe(broken)
    later = FakeListener()
    agent.subscribe(later)
    with caplog.at_level(logging.ERROR):
        run(lambda: agent.prompt("hi"))

    assert "agent listener failed" in caplog.text
    assert later.kinds()[-1] == "agent_end"
    assert agent.state.messages[-1].text == "fine"


def test_async_listeners_finish_each_event_before_the_next() -> None:
    provider = faux(tool_turn(FauxToolCall("echo", {"text": "x"})), text_turn("done"))
    agent = Agent(model=provider.model, tools=[FakeEchoTool()])
    log: list[str] = []

    async def slow_listener(event: AgentEvent) -> None:
        log.append(f"begin {event.type}")
        for _ in range(3):
            await asyncio.sleep(0)  # yield to the loop: other work must not interleave
        log.append(f"end {event.type}")

    agent.subscribe(slow_listener)
    run(lambda: agent.prompt("hi"))

    assert len(log) > 10
    for begin, end in zip(log[::2], log[1::2], strict=True):
        assert begin.startswith("begin ") and end == "end " + begin.removeprefix("begin ")


def test_unsubscribe_stops_delivery() -> None:
    provider = faux(text_turn("one"), text_turn("two"))
    agent = Agent(model=provider.model)
    recorder = FakeListener()
    unsubscribe = agent.subscribe(recorder)
    run(lambda: agent.prompt("first"))
    count = len(recorder.events)
    unsubscribe()
    run(lambda: agent.prompt("second"))
    assert count > 0
    assert len(recorder.events) == count
    assert agent.state.messages[-1].text == "two"


def test_state_tracks_the_streaming_message_before_listeners_run() -> None:
    provider = faux(text_turn("streamed"))
    agent = Agent(model=provider.model)
    observed: list[tuple[str, bool, int]] = []

    def listener(event: AgentEvent) -> None:
        if isinstance(event, MessageStart | MessageUpdate | MessageEnd) and isinstance(
            event.message, AssistantMessage
        ):
            observed.append(
                (
                    event.type,
                    agent.state.streaming_message is event.message,
                    len(agent.state.messages),
                )
            )
        if isinstance(event, AgentEnd):
            observed.append((event.type, agent.is_running, len(agent.state.messages)))

    agent.subscribe(listener)
    run(lambda: agent.prompt("go"))

    assert observed[0] == ("message_start", True, 1)
    assert all(streaming for kind, streaming, _ in observed if kind == "message_update")
    assert ("message_end", False, 2) in observed
    assert observed[-1] == ("agent_end", False, 2)


def test_stream_options_are_used_and_the_loop_sets_signal_and_thinking() -> None:
    provider = faux(text_turn("a"))
    agent = Agent(
        model=provider.model,
        system_prompt="be brief",
        thinking="high",
        stream_options=lambda model: StreamOptions(api_key=f"key-for-{model.id}", max_tokens=99),
    )

    run(lambda: agent.prompt("x"))

    request = provider.requests[0]
    assert request.system_prompt == "be brief"
    assert request.options.api_key == "key-for-faux-1"
    assert request.options.max_tokens == 99
    assert request.options.thinking == "high"
    assert request.options.signal is not None


def test_settings_changed_mid_run_apply_to_the_next_request() -> None:
    provider = faux(tool_turn(FauxToolCall("echo", {"text": "x"})), text_turn("done"))
    agent = Agent(model=provider.model, tools=[FakeEchoTool()])

    def on_event(event: AgentEvent) -> None:
        if event.type == "tool_execution_end":
            agent.set_system_prompt("changed")
            agent.set_thinking("low")
            agent.set_tools([FakeEchoTool("renamed")])

    agent.subscribe(on_event)
    run(lambda: agent.prompt("x"))

    first, second = provider.requests
    assert (first.system_prompt, first.options.thinking, first.tool_names) == (
        None,
        "off",
        ["echo"],
    )
    assert (second.system_prompt, second.options.thinking, second.tool_names) == (
        "changed",
        "low",
        ["renamed"],
    )


def test_a_stream_without_a_terminal_event_is_an_error() -> None:
    from picode.ai.event_stream import AssistantMessageEventStream
    from picode.ai.events import StartEvent, TextDeltaEvent, TextStartEvent

    provider = faux()

    def unterminated(model: Model, context: Context, options: StreamOptions) -> object:
        stream = AssistantMessageEventStream(throttle=0)
        partial = AssistantMessage([], model.api, model.provider, model.id)
        stream.push(StartEvent(partial))
        stream.push(TextStartEvent(0, partial))
        from picode.ai.types import TextContent

        partial.content.append(TextContent("cut"))
        stream.push(TextDeltaEvent(0, "cut", partial))
        stream.end()
        return stream

    agent, recorder = make_agent(provider, stream_fn=unterminated)  # type: ignore[arg-type]
    run(lambda: agent.prompt("x"))

    final = agent.state.messages[-1]
    assert isinstance(final, AssistantMessage)
    assert final.stop_reason == "error"
    assert final.text == "cut"
    assert "ended before" in (final.error_message or "")
    assert not any(
        isinstance(e, MessageUpdate) and isinstance(e.event, ErrorEvent) for e in recorder.events
    )
