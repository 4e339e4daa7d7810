"""MessageBuilder: the events a provider's calls turn into, usage, cost and failure paths."""

from __future__ import annotations

from typing import Any

import pytest

from picode.ai import partial_json
from picode.ai.builder import MessageBuilder, estimate_tokens, estimate_usage
from picode.ai.event_stream import AssistantMessageEventStream
from picode.ai.events import AssistantMessageEvent, ToolCallEndEvent
from picode.ai.models import Model, ModelCost, calculate_cost
from picode.ai.types import (
    Context,
    ImageContent,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    Usage,
    UserMessage,
)
from tests.ai.stream_helpers import FakeClock, collapsed, collect, next_event, run, summary

MODEL = Model(
    id="test-model",
    name="Test",
    api="test-api",
    provider="test",
    cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75),
)
CONTEXT = Context(
    system_prompt="You are terse.",
    messages=[UserMessage("Write hello.py please")],
    tools=[Tool("write", "Write a file", {"type": "object"})],
)
FOREVER = 10_000.0


def _builder(
    throttle: float = 0.0, clock: FakeClock | None = None
) -> tuple[MessageBuilder, AssistantMessageEventStream]:
    stream = AssistantMessageEventStream(throttle=throttle, clock=clock or FakeClock())
    return MessageBuilder(MODEL, stream, CONTEXT), stream


async def _events(stream: AssistantMessageEventStream) -> list[AssistantMessageEvent]:
    return await collect(stream)


def test_text_message_event_sequence() -> None:
    async def body() -> None:
        out, stream = _builder()
        index = out.text_start()
        out.text_delta(index, "Hel")
        out.text_delta(index, "")  # ignored
        out.text_delta(index, "lo")
        out.text_end(index, signature="sig-1")
        out.finish("stop")
        events = await _events(stream)
        assert collapsed(events) == [
            ("start",),
            ("text_start", 0),
            ("text_delta", 0, "Hello"),
            ("text_end", 0),
            ("done",),
        ]
        assert events[-2].content == "Hello"  # type: ignore[union-attr]
        final = await stream.result()
        assert final.content == [TextContent("Hello", "sig-1")]
        assert final.stop_reason == "stop"
        assert (final.api, final.provider, final.model) == ("test-api", "test", "test-model")
        assert events[-1].reason == "stop"  # type: ignore[union-attr]
        assert all(getattr(e, "partial", final) is final for e in events)

    run(body())


def test_thinking_then_text_with_signatures() -> None:
    async def body() -> None:
        out, stream = _builder()
        think = out.thinking_start()
        out.thinking_delta(think, "Let me ")
        out.thinking_delta(think, "think.")
        out.thinking_signature(think, "abc")
        out.thinking_signature(think, "def")  # streamed signatures append
        out.thinking_end(think)
        redacted = out.thinking_start("opaque", redacted=True)
        out.thinking_end(redacted)
        text = out.text_start()
        out.text_delta(text, "Done.")
        out.finish("length")
        events = await _events(stream)
        assert collapsed(events) == [
            ("start",),
            ("thinking_start", 0),
            ("thinking_delta", 0, "Let me think."),
            ("thinking_end", 0),
            ("thinking_start", 1),
            ("thinking_end", 1),
            ("text_start", 2),
            ("text_delta", 2, "Done."),
            ("text_end", 2),  # closed by finish()
            ("done",),
        ]
        final = await stream.result()
        assert final.content == [
            ThinkingContent("Let me think.", "abcdef"),
            ThinkingContent("", "opaque", redacted=True),
            TextContent("Done."),
        ]
        assert final.stop_reason == "length"
        out2, _ = _builder()
        index = out2.thinking_start()
        out2.thinking_signature(index, "one")
        out2.thinking_signature(index, "two", append=False)
        block = out2.message.content[index]
        assert isinstance(block, ThinkingContent)
        assert block.thinking_signature == "two"

    run(body())


def test_tool_call_end_carries_parsed_arguments_and_stop_becomes_tool_use() -> None:
    async def body() -> None:
        out, stream = _builder()
        index = out.toolcall_start("call_1", "write", thought_signature="ts")
        for piece in ['{"path": "hel', 'lo.py", "con', 'tent": "print(1)\\n"}']:
            out.toolcall_delta(index, piece)
        assert out.toolcall_arguments_text(index) == (
            '{"path": "hello.py", "content": "print(1)\\n"}'
        )
        out.toolcall_end(index)
        out.finish("stop")
        events = await _events(stream)
        assert collapsed(events) == [
            ("start",),
            ("toolcall_start", 0),
            ("toolcall_delta", 0, '{"path": "hello.py", "content": "print(1)\\n"}'),
            ("toolcall_end", 0),
            ("done",),
        ]
        end = events[-2]
        assert isinstance(end, ToolCallEndEvent)
        expected = ToolCall("call_1", "write", {"path": "hello.py", "content": "print(1)\n"}, "ts")
        assert end.tool_call == expected
        final = await stream.result()
        assert final.stop_reason == "toolUse"
        assert events[-1].reason == "toolUse"  # type: ignore[union-attr]
        assert final.tool_calls == [expected]

    run(body())


def test_whole_arguments_from_the_api_win_and_invalid_json_gives_empty_args() -> None:
    out, _ = _builder()
    whole = out.toolcall_start("a", "ls")
    out.toolcall_end(whole, {"path": "."})
    broken = out.toolcall_start("b", "ls")
    out.toolcall_delta(broken, "{not json")
    out.toolcall_end(broken)
    assert out.message.tool_calls == [ToolCall("a", "ls", {"path": "."}), ToolCall("b", "ls", {})]


def test_partial_arguments_are_parsed_per_delivery_not_per_delta(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    snapshots: list[dict[str, Any]] = []
    real_snapshot = partial_json.StreamingJson.snapshot

    def counting_snapshot(self: partial_json.StreamingJson) -> dict[str, Any]:
        value = real_snapshot(self)
        snapshots.append(value)
        return value

    monkeypatch.setattr(partial_json.StreamingJson, "snapshot", counting_snapshot)

    async def body() -> None:
        clock = FakeClock()
        out, stream = _builder(throttle=FOREVER, clock=clock)
        index = out.toolcall_start("c", "write")
        assert summary(await next_event(stream)) == ("start",)
        assert summary(await next_event(stream)) == ("toolcall_start", 0)
        block = out.message.content[index]
        assert isinstance(block, ToolCall)

        out.toolcall_delta(index, '{"path": "a.py", "content": "li')
        first = await next_event(stream)  # the first delta goes out at once
        assert first.partial.content[index] is block  # type: ignore[union-attr]
        assert block.arguments == {"path": "a.py", "content": "li"}

        for piece in ["ne 1\\n", "line 2", "\\n", "line 3"]:
            out.toolcall_delta(index, piece)
        # Inside the throttle window: nothing delivered, nothing parsed.
        assert block.arguments == {"path": "a.py", "content": "li"}
        assert len(snapshots) == 1

        clock.advance(FOREVER)
        out.toolcall_delta(index, "\\n")
        merged = await next_event(stream)
        assert summary(merged) == ("toolcall_delta", 0, "ne 1\\nline 2\\nline 3\\n")
        assert block.arguments == {"path": "a.py", "content": "line 1\nline 2\nline 3\n"}
        assert len(snapshots) == 2

        out.toolcall_delta(index, '"}')
        out.toolcall_end(index)
        out.finish("toolUse")
        rest = await collect(stream)
        assert [summary(e)[0] for e in rest] == ["toolcall_delta", "toolcall_end", "done"]
        assert block.arguments == {"path": "a.py", "content": "line 1\nline 2\nline 3\n"}

    run(body())


def test_usage_is_estimated_when_the_provider_reports_none() -> None:
    async def body() -> None:
        out, stream = _builder()
        index = out.text_start()
        out.text_delta(index, "x" * 400)
        out.finish("stop")
        final = await stream.result()
        usage = final.usage
        assert usage.estimated is True
        expected = estimate_usage(CONTEXT, final)
        assert usage.input == expected.input > 0
        assert usage.output == 100
        assert usage.total_tokens == usage.input + usage.output
        reference = Usage(input=usage.input, output=usage.output)
        assert usage.cost == calculate_cost(MODEL, reference)
        assert usage.cost.total > 0

    run(body())


def test_reported_usage_is_kept_and_priced() -> None:
    async def body() -> None:
        out, stream = _builder()
        out.set_usage(input=1000, output=200, cache_read=5000, cache_write=300)
        out.set_usage(output=250)  # a later report updates one figure
        out.finish("stop")
        usage = (await stream.result()).usage
        assert usage.estimated is False
        assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (
            1000,
            250,
            5000,
            300,
        )
        assert usage.total_tokens == 6550
        assert usage.cost.total == pytest.approx(
            (1000 * 3 + 250 * 15 + 5000 * 0.3 + 300 * 3.75) / 1_000_000
        )

    run(body())


def test_a_model_reported_error_is_an_error_event() -> None:
    async def body() -> None:
        out, stream = _builder()
        index = out.text_start()
        out.text_delta(index, "I can't")
        out.finish("error")
        events = await _events(stream)
        assert [summary(e)[0] for e in events][-2:] == ["text_end", "error"]
        final = await stream.result()
        assert final.stop_reason == "error"
        assert final.error_message == "The model stopped with an error"
        assert final.text == "I can't"

    run(body())


def test_failure_before_the_stream_is_exactly_one_error_event() -> None:
    async def body() -> None:
        out, stream = _builder()
        out.fail("401 Unauthorized (check the API key)")
        out.finish("stop")  # ignored: already over
        out.fail("again")  # ignored
        events = await _events(stream)
        assert [summary(e) for e in events] == [("error",)]
        final = await stream.result()
        assert final.content == []
        assert final.stop_reason == "error"
        assert final.error_message == "401 Unauthorized (check the API key)"
        # Nothing came back: nothing was used, and the session's totals must not grow.
        assert final.usage == Usage()

    run(body())


def test_failure_mid_stream_keeps_the_partial_content_and_arguments() -> None:
    async def body() -> None:
        out, stream = _builder()
        text = out.text_start()
        out.text_delta(text, "Writing it now")
        out.text_end(text)
        call = out.toolcall_start("c1", "write")
        out.toolcall_delta(call, '{"path": "a.py", "content": "par')
        out.fail("Connection error: reset by peer")
        # Parsed by fail() itself, not left to whoever iterates later.
        assert out.message.tool_calls[0].arguments == {"path": "a.py", "content": "par"}
        events = await _events(stream)
        assert collapsed(events)[-2:] == [
            ("toolcall_delta", 1, '{"path": "a.py", "content": "par'),
            ("error",),
        ]
        final = await stream.result()
        assert final.stop_reason == "error"
        assert final.text == "Writing it now"
        assert final.tool_calls == [ToolCall("c1", "write", {"path": "a.py", "content": "par"})]
        assert final.usage.output > 0

    run(body())


def test_an_aborted_failure_is_reported_as_aborted() -> None:
    async def body() -> None:
        out, stream = _builder()
        out.text_delta(out.text_start(), "half")
        out.fail("Request aborted", aborted=True)
        events = await _events(stream)
        assert events[-1].reason == "aborted"  # type: ignore[union-attr]
        final = await stream.result()
        assert final.stop_reason == "aborted"
        assert final.text == "half"

    run(body())


def test_estimates_count_every_kind_of_content() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    context = Context(
        system_prompt="s" * 40,
        messages=[UserMessage([TextContent("t" * 40), ImageContent("x", "image/png")])],
    )
    with_image = estimate_usage(context).input
    without = estimate_usage(Context(system_prompt="s" * 40, messages=[UserMessage("t" * 40)]))
    assert with_image > without.input == 20
