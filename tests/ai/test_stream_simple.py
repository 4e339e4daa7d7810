"""stream_simple end to end through the scripted provider: sequences, failures, abort, cleanup."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from picode.ai.abort import AbortController, AbortSignal
from picode.ai.builder import MessageBuilder, run_provider
from picode.ai.events import ToolCallEndEvent
from picode.ai.models import Model
from picode.ai.providers.faux import (
    FauxProvider,
    FauxText,
    FauxThinking,
    FauxToolCall,
    FauxTurn,
    text_turn,
    tool_turn,
)
from picode.ai.stream import (
    PROVIDER_MODULES,
    StreamOptions,
    known_apis,
    register_api,
    stream_simple,
    unregister_api,
)
from picode.ai.types import Context, TextContent, ThinkingContent, ToolCall, UserMessage
from tests.ai.stream_helpers import TIMEOUT_S, collapsed, collect, run, summary

CONTEXT = Context(system_prompt="Be brief.", messages=[UserMessage("hello there")])


def _custom_api(produce: Any) -> Model:
    api = f"test-{id(produce)}"
    register_api(api, produce)
    return Model(id="custom", name="Custom", api=api, provider="test")


def test_a_text_turn() -> None:
    async def body() -> None:
        faux = FauxProvider([text_turn("Hello, wörld! 👋")], chunk_size=3)
        try:
            stream = stream_simple(faux.model, CONTEXT)
            events = await collect(stream)
            assert collapsed(events) == [
                ("start",),
                ("text_start", 0),
                ("text_delta", 0, "Hello, wörld! 👋"),
                ("text_end", 0),
                ("done",),
            ]
            final = await stream.result()
            assert final is events[-1].message  # type: ignore[union-attr]
            assert final.content == [TextContent("Hello, wörld! 👋")]
            assert (final.api, final.provider, final.model) == (faux.api, "faux", "faux-1")
        finally:
            faux.close()

    run(body())


def test_thinking_text_and_tool_calls() -> None:
    turn = FauxTurn(
        [
            FauxThinking("Need to look first.", signature="sig-x"),
            FauxText("Checking."),
            FauxToolCall("read", {"path": "a.py"}, id="call_a"),
            FauxToolCall("bash", {"command": "ls -la", "timeout": 5}),
        ]
    )

    async def body() -> None:
        faux = FauxProvider([turn], chunk_size=4)
        try:
            stream = stream_simple(faux.model, CONTEXT)
            events = await collect(stream)
            assert collapsed(events) == [
                ("start",),
                ("thinking_start", 0),
                ("thinking_delta", 0, "Need to look first."),
                ("thinking_end", 0),
                ("text_start", 1),
                ("text_delta", 1, "Checking."),
                ("text_end", 1),
                ("toolcall_start", 2),
                ("toolcall_delta", 2, '{"path": "a.py"}'),
                ("toolcall_end", 2),
                ("toolcall_start", 3),
                ("toolcall_delta", 3, '{"command": "ls -la", "timeout": 5}'),
                ("toolcall_end", 3),
                ("done",),
            ]
            ends = [e for e in events if isinstance(e, ToolCallEndEvent)]
            assert ends[0].tool_call == ToolCall("call_a", "read", {"path": "a.py"})
            assert ends[1].tool_call.arguments == {"command": "ls -la", "timeout": 5}
            assert ends[1].tool_call.name == "bash"
            assert ends[1].tool_call.id  # synthesised
            final = await stream.result()
            assert final.stop_reason == "toolUse"
            assert events[-1].reason == "toolUse"  # type: ignore[union-attr]
            assert final.content[0] == ThinkingContent("Need to look first.", "sig-x")
        finally:
            faux.close()

    run(body())


def test_a_stop_reason_of_stop_with_tool_calls_becomes_tool_use() -> None:
    async def body() -> None:
        faux = FauxProvider([tool_turn(FauxToolCall("ls", {}), stop_reason="stop")])
        try:
            final = await stream_simple(faux.model, CONTEXT).result()
            assert final.stop_reason == "toolUse"
        finally:
            faux.close()

    run(body())


def test_the_length_stop_reason_is_kept() -> None:
    async def body() -> None:
        faux = FauxProvider([text_turn("cut sho", stop_reason="length")])
        try:
            events = await collect(stream_simple(faux.model, CONTEXT))
            assert events[-1].type == "done"
            assert events[-1].reason == "length"  # type: ignore[union-attr]
        finally:
            faux.close()

    run(body())


def test_usage_estimated_when_not_reported_and_priced_either_way() -> None:
    async def body() -> None:
        faux = FauxProvider([text_turn("a" * 80), text_turn("b", usage=(1_000_000, 100_000))])
        try:
            estimated = (await stream_simple(faux.model, CONTEXT).result()).usage
            assert estimated.estimated is True
            assert estimated.input > 0
            assert estimated.output == 20
            assert estimated.total_tokens == estimated.input + estimated.output
            assert estimated.cost.total == pytest.approx(
                (estimated.input * 3 + estimated.output * 15) / 1_000_000
            )
            reported = (await stream_simple(faux.model, CONTEXT).result()).usage
            assert reported.estimated is False
            assert (reported.input, reported.output) == (1_000_000, 100_000)
            assert reported.cost.total == pytest.approx(3 + 1.5)
        finally:
            faux.close()

    run(body())


def test_an_error_before_the_stream_is_one_error_event_without_start() -> None:
    async def body() -> None:
        faux = FauxProvider(
            [FauxTurn([FauxText("never")], error="429 Rate limited", error_before_stream=True)]
        )
        try:
            stream = stream_simple(faux.model, CONTEXT)
            events = await collect(stream)
            assert [summary(e) for e in events] == [("error",)]
            final = await stream.result()
            assert (final.stop_reason, final.error_message) == ("error", "429 Rate limited")
            assert final.content == []
        finally:
            faux.close()

    run(body())


def test_an_error_mid_stream_keeps_the_partial() -> None:
    async def body() -> None:
        faux = FauxProvider([FauxTurn([FauxText("half an answer")], error="Connection reset")])
        try:
            stream = stream_simple(faux.model, CONTEXT)
            events = await collect(stream)
            assert collapsed(events) == [
                ("start",),
                ("text_start", 0),
                ("text_delta", 0, "half an answer"),
                ("text_end", 0),
                ("error",),
            ]
            assert events[-1].reason == "error"  # type: ignore[union-attr]
            final = await stream.result()
            assert final.text == "half an answer"
            assert final.error_message == "Connection reset"
            assert final.usage.estimated and final.usage.output > 0
        finally:
            faux.close()

    run(body())


def test_abort_before_start_is_one_aborted_event_and_no_request() -> None:
    async def body() -> None:
        faux = FauxProvider([text_turn("unused")])
        try:
            options = StreamOptions(signal=AbortSignal.aborted_with("user pressed Esc"))
            stream = stream_simple(faux.model, CONTEXT, options)
            events = await collect(stream)
            assert [summary(e) for e in events] == [("error",)]
            assert events[0].reason == "aborted"  # type: ignore[union-attr]
            final = await stream.result()
            assert final.stop_reason == "aborted"
            assert final.error_message == "Request aborted"
            assert faux.requests == []
        finally:
            faux.close()

    run(body())


def test_abort_mid_stream_cancels_the_provider_and_keeps_the_partial() -> None:
    async def body() -> None:
        faux = FauxProvider([FauxTurn([FauxText("streamed so far")], hang=True)])
        try:
            controller = AbortController()
            stream = stream_simple(faux.model, CONTEXT, StreamOptions(signal=controller.signal))
            seen = []
            async for event in stream:
                seen.append(event)
                if event.type == "text_end":
                    controller.abort("Esc")
            assert [summary(e)[0] for e in seen][-2:] == ["text_end", "error"]
            assert seen[-1].reason == "aborted"  # type: ignore[union-attr]
            final = await stream.result()
            assert final.stop_reason == "aborted"
            assert final.text == "streamed so far"
            assert faux.aborts == 1
            assert controller.signal._callbacks == []  # the provider unhooked itself
        finally:
            faux.close()

    run(body())


def test_a_finished_stream_unhooks_from_a_long_lived_abort_signal() -> None:
    async def body() -> None:
        faux = FauxProvider([text_turn("one"), text_turn("two")])
        try:
            controller = AbortController()  # e.g. one per agent run, many requests
            for _ in range(2):
                options = StreamOptions(signal=controller.signal)
                assert (await stream_simple(faux.model, CONTEXT, options).result()).text
            assert controller.signal._callbacks == []
        finally:
            faux.close()

    run(body())


def test_an_unknown_api_is_a_value_error_listing_the_known_ones() -> None:
    async def body() -> None:
        model = Model(id="x", name="x", api="carrier-pigeon", provider="p")
        with pytest.raises(ValueError, match="carrier-pigeon") as info:
            stream_simple(model, CONTEXT)
        assert "anthropic-messages" in str(info.value)

    run(body())
    assert set(PROVIDER_MODULES) <= set(known_apis())


def test_a_produce_that_returns_without_finishing_is_an_error() -> None:
    async def produce(model: Model, context: Context, options: Any, out: MessageBuilder) -> None:
        out.text_delta(out.text_start(), "and then nothing")

    async def body() -> None:
        model = _custom_api(produce)
        try:
            stream = stream_simple(model, CONTEXT)
            events = await collect(stream)
            assert events[-1].type == "error"
            final = await stream.result()
            assert final.stop_reason == "error"
            assert final.error_message is not None
            assert final.error_message.startswith("Stream ended before")
            assert final.text == "and then nothing"
        finally:
            unregister_api(model.api)

    run(body())


def test_a_produce_that_raises_gives_a_readable_error_event() -> None:
    class FakeRateLimitError(Exception):
        status_code = 429
        body = {"error": {"message": "slow down"}}

    failures: list[BaseException] = [RuntimeError("kaboom"), FakeRateLimitError()]

    async def produce(model: Model, context: Context, options: Any, out: MessageBuilder) -> None:
        raise failures.pop(0)

    async def body() -> None:
        model = _custom_api(produce)
        try:
            for expected in ("RuntimeError: kaboom", "429 Rate limited: slow down"):
                stream = stream_simple(model, CONTEXT)
                events = await collect(stream)
                assert [summary(e) for e in events] == [("error",)]
                assert (await stream.result()).error_message == expected
        finally:
            unregister_api(model.api)

    run(body())


def test_a_provider_module_given_by_name_is_imported_on_first_use() -> None:
    name = "tests.fake_modules.provider"
    sys.modules.pop(name, None)

    async def body() -> None:
        model = Model(id="m", name="m", api="by-name", provider="p")
        stream = run_provider(name, model, CONTEXT, StreamOptions())
        assert name not in sys.modules
        final = await stream.result()
        assert final.text == f"served by {name}"
        assert name in sys.modules

    run(body())


def test_a_consumer_that_never_iterates_gets_the_result() -> None:
    async def body() -> None:
        faux = FauxProvider([text_turn("x" * 5000)], chunk_size=1)
        try:
            final = await stream_simple(faux.model, CONTEXT).result()
            assert final.text == "x" * 5000
        finally:
            faux.close()

    run(body())


def test_aclose_cancels_the_provider_and_leaves_no_task() -> None:
    async def body() -> None:
        faux = FauxProvider([FauxTurn([FauxText("hi")], hang=True)])
        try:
            before = asyncio.all_tasks()
            stream = stream_simple(faux.model, CONTEXT)
            async for event in stream:
                if event.type == "text_end":
                    break
            await stream.aclose()
            assert faux.aborts == 1
            assert asyncio.all_tasks() == before
            final = await stream.result()
            assert final.stop_reason == "aborted"
            assert final.text == "hi"
        finally:
            faux.close()

    run(body())


def test_dropping_the_stream_after_a_break_cancels_the_provider() -> None:
    async def body() -> None:
        faux = FauxProvider([FauxTurn([FauxText("hi")], hang=True)])
        try:
            before = asyncio.all_tasks()
            async for event in stream_simple(faux.model, CONTEXT):
                if event.type == "text_end":
                    break
            del event
            leftover = asyncio.all_tasks() - before  # the provider's task, being cancelled
            assert len(leftover) <= 1
            await asyncio.wait(leftover, timeout=TIMEOUT_S)
            assert all(task.cancelled() for task in leftover)
            assert asyncio.all_tasks() == before
            assert faux.aborts == 1
            assert faux.abort_seen.is_set()
        finally:
            faux.close()

    run(body())
