"""Aborting a run: mid-stream, while tools run, and the transcript left behind."""

from __future__ import annotations

import asyncio

from picode.agent.events import AgentEvent, MessageUpdate, ToolExecutionEnd
from picode.agent.tool_exec import ABORTED_TOOL_CALL, NOT_RUN_AFTER_ABORT
from picode.ai.providers.faux import FauxText, FauxToolCall, FauxTurn, text_turn, tool_turn
from picode.ai.types import AssistantMessage, ToolResultMessage, UserMessage
from tests.agent.fakes import (
    FakeEchoTool,
    FakeGatedTool,
    assert_transcript_valid,
    faux,
    make_agent,
    run,
    wait,
)


def test_abort_mid_stream_keeps_the_partial_and_reaches_the_provider() -> None:
    provider = faux(FauxTurn([FauxText("partial answer")], hang=True))
    agent, recorder = make_agent(provider)
    text_ended = asyncio.Event()
    agent.subscribe(
        lambda e: (
            text_ended.set()
            if isinstance(e, MessageUpdate) and e.event.type == "text_end"
            else None
        )
    )

    async def body() -> None:
        prompt = asyncio.ensure_future(agent.prompt("tell me"))
        await wait(text_ended, "the streamed text")
        assert agent.is_running
        agent.abort()
        await asyncio.wait_for(prompt, 5)
        await wait(provider.abort_seen, "the provider to see the abort")

    run(body)

    final = agent.state.messages[-1]
    assert isinstance(final, AssistantMessage)
    assert final.stop_reason == "aborted"
    assert final.text == "partial answer"
    assert final.usage.total_tokens > 0  # estimated, so the context meter stays right
    kinds = recorder.kinds()
    assert kinds[-3:] == ["message_end:assistant", "turn_end", "agent_end"]
    assert kinds.count("message_start:assistant") == 1
    assert not agent.is_running
    assert agent.state.error is None


def test_no_message_update_after_an_abort_from_a_listener() -> None:
    provider = faux(FauxTurn([FauxText("abcdefghijklmnop")]), chunk_size=1)
    agent, recorder = make_agent(provider)
    aborted_at: list[int] = []

    def abort_on_first_delta(event: AgentEvent) -> None:
        if isinstance(event, MessageUpdate) and event.event.type == "text_delta" and not aborted_at:
            aborted_at.append(len(recorder.events))
            agent.abort("stop")

    agent.subscribe(abort_on_first_delta)
    run(lambda: agent.prompt("x"))

    assert aborted_at
    after = recorder.kinds()[aborted_at[0] :]
    assert after == ["message_end:assistant", "turn_end", "agent_end"]
    final = agent.state.messages[-1]
    assert isinstance(final, AssistantMessage) and final.stop_reason == "aborted"
    assert final.text  # the part that arrived before the abort is kept


def test_abort_while_tools_run_reaches_every_tool_and_synthesises_results() -> None:
    provider = faux(
        tool_turn(FauxToolCall("first", {}, id="a"), FauxToolCall("second", {}, id="b")),
        text_turn("never requested"),
    )
    polite = FakeGatedTool("first")
    stubborn = FakeGatedTool("second", ignore_signal=True)
    agent, recorder = make_agent(provider, [polite, stubborn])

    async def body() -> None:
        prompt = asyncio.ensure_future(agent.prompt("go"))
        await wait(polite.started, "first tool")
        await wait(stubborn.started, "second tool")
        assert agent.state.pending_tool_calls == {"a", "b"}
        agent.abort()
        await wait(polite.signal_seen, "first tool's signal")
        await wait(stubborn.signal_seen, "second tool's signal")
        # The stubborn tool ignores its signal, yet the run ends.
        await asyncio.wait_for(prompt, 5)

    run(body)

    results = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert [(r.tool_call_id, r.text, r.is_error) for r in results] == [
        ("a", ABORTED_TOOL_CALL, True),
        ("b", ABORTED_TOOL_CALL, True),
    ]
    assert len(provider.requests) == 1
    assert recorder.kinds()[-2:] == ["turn_end", "agent_end"]
    assert agent.state.pending_tool_calls == set()
    assert_transcript_valid(agent.state.messages)


def test_results_produced_before_an_abort_are_kept() -> None:
    provider = faux(
        tool_turn(FauxToolCall("echo", {"text": "quick"}, id="a"), FauxToolCall("gate", {}, id="b"))
    )
    gate = FakeGatedTool("gate")
    agent, _ = make_agent(provider, [FakeEchoTool(), gate])

    def abort_after_first_result(event: AgentEvent) -> None:
        if isinstance(event, ToolExecutionEnd) and event.tool_call_id == "a":
            agent.abort()

    agent.subscribe(abort_after_first_result)

    run(lambda: agent.prompt("go"))

    quick, gated = (m for m in agent.state.messages if isinstance(m, ToolResultMessage))
    assert (quick.text, quick.is_error) == ("echo: quick", False)
    assert (gated.text, gated.is_error) == (ABORTED_TOOL_CALL, True)
    assert_transcript_valid(agent.state.messages)


def test_abort_of_a_message_with_tool_calls_runs_none_and_leaves_a_valid_transcript() -> None:
    provider = faux(
        FauxTurn([FauxToolCall("echo", {"text": "never"}, id="c1")], hang=True),
        text_turn("after continue"),
    )
    echo = FakeEchoTool()
    agent, _ = make_agent(provider, [echo])
    call_streamed = asyncio.Event()
    agent.subscribe(
        lambda e: (
            call_streamed.set()
            if isinstance(e, MessageUpdate) and e.event.type == "toolcall_end"
            else None
        )
    )

    async def body() -> None:
        prompt = asyncio.ensure_future(agent.prompt("go"))
        await wait(call_streamed, "the tool call")
        agent.abort()
        await asyncio.wait_for(prompt, 5)

    run(body)

    assistant, result = agent.state.messages[-2:]
    assert isinstance(assistant, AssistantMessage) and assistant.stop_reason == "aborted"
    assert [c.id for c in assistant.tool_calls] == ["c1"]
    assert isinstance(result, ToolResultMessage)
    assert (result.tool_call_id, result.text, result.is_error) == ("c1", NOT_RUN_AFTER_ABORT, True)
    assert echo.calls == []
    assert_transcript_valid(agent.state.messages)

    # The transcript can be sent again: continue from the tool-result tail.
    run(agent.continue_)
    assert agent.state.messages[-1].text == "after continue"
    resent = provider.requests[-1].messages
    assert [m.role for m in resent] == ["user", "assistant", "toolResult"]


def test_abort_before_the_request_gives_an_empty_aborted_message() -> None:
    provider = faux(text_turn("unused"))
    agent, recorder = make_agent(provider)

    def abort_on_prompt(event: AgentEvent) -> None:
        if event.type == "message_end" and isinstance(event.message, UserMessage):  # type: ignore[union-attr]
            agent.abort()

    agent.subscribe(abort_on_prompt)
    run(lambda: agent.prompt("x"))

    final = agent.state.messages[-1]
    assert isinstance(final, AssistantMessage)
    assert (final.stop_reason, final.content) == ("aborted", [])
    # No request went out, so no tokens: the same rule as a provider's own early failure.
    assert final.usage.total_tokens == 0
    assert provider.requests == []
    assert recorder.kinds()[-4:] == [
        "message_start:assistant",
        "message_end:assistant",
        "turn_end",
        "agent_end",
    ]


def test_abort_when_idle_is_a_no_op_and_the_next_run_is_fresh() -> None:
    provider = faux(text_turn("hello"))
    agent, _ = make_agent(provider)
    agent.abort()
    run(lambda: agent.prompt("x"))
    assert agent.state.messages[-1].text == "hello"
    agent.abort("after the run")


def test_cancelling_the_prompt_caller_aborts_the_run() -> None:
    provider = faux(FauxTurn([FauxText("slow")], hang=True))
    agent, recorder = make_agent(provider)
    started = asyncio.Event()
    agent.subscribe(lambda e: started.set() if isinstance(e, MessageUpdate) else None)

    async def body() -> None:
        prompt = asyncio.ensure_future(agent.prompt("x"))
        await wait(started, "streaming")
        prompt.cancel()
        await asyncio.wait_for(agent.wait_for_idle(), 5)

    run(body)

    assert recorder.kinds()[-1] == "agent_end"
    final = agent.state.messages[-1]
    assert isinstance(final, AssistantMessage) and final.stop_reason == "aborted"
    assert not agent.is_running
