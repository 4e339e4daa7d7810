"""anthropic-messages through the real Anthropic SDK against the wire server."""

from __future__ import annotations

from functools import partial

import pytest

from picode.ai.errors import (
    CONNECTION_LOST,
    TIMED_OUT,
    is_context_overflow,
    is_transient_error,
    retry_after_from_message,
)
from picode.ai.events import TextDeltaEvent, ToolCallEndEvent
from picode.ai.types import (
    Context,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tests.providers.models import PNG, READ_TOOL, past_reply, wire_model
from tests.providers.sdk_streaming import (
    TEXT,
    THINKING,
    TOOL_CALL,
    Outcome,
    run,
    simple_context,
    stream_all,
    stream_once,
    stream_then_abort,
)
from tests.wire.anthropic_protocol import AnthropicStream, anthropic_error
from tests.wire.server import Cut, Stall, WireServer

claude = partial(wire_model, "anthropic-messages")


# --- content ---------------------------------------------------------------------------


def test_text_reply_streams_exact_event_sequence(wire: WireServer) -> None:
    wire.enqueue(
        AnthropicStream().ping().text("Hel", "lo ", "wörld").stop("end_turn", 7).response()
    )
    outcome = stream_once(claude(wire))

    assert outcome.shape == ["start", *TEXT, "done"]
    assert outcome.deltas(0) == "Hello wörld"
    message = outcome.message
    assert message.text == "Hello wörld"
    assert message.stop_reason == "stop"
    assert message.response_id == "msg_test_01"
    assert (message.usage.input, message.usage.output) == (12, 7)
    assert not message.usage.estimated
    assert message.usage.cost.total == pytest.approx((12 * 3 + 7 * 15) / 1_000_000)

    request = wire.requests[0]
    assert request.path == "/v1/messages"
    body = request.json
    assert body["model"] == "claude-test"
    assert body["stream"] is True
    assert body["max_tokens"] == 8192
    assert body["system"] == [
        {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "Hello", "cache_control": {"type": "ephemeral"}}],
        }
    ]
    assert "thinking" not in body
    assert "test-key" in (
        request.headers.get("x-api-key", "") + request.headers.get("authorization", "")
    )


def test_usage_keeps_cache_reads_and_writes_out_of_input(wire: WireServer) -> None:
    stream = AnthropicStream(input_tokens=12, cache_read=100, cache_write=50).text("ok")
    stream.stop("end_turn", 9, usage={"input_tokens": 12, "cache_read_input_tokens": 100})
    wire.enqueue(stream.response())
    usage = stream_once(claude(wire)).message.usage

    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (12, 9, 100, 50)
    assert usage.total_tokens == 171


def test_thinking_with_signature_and_budget_request(wire: WireServer) -> None:
    reply = AnthropicStream().thinking("Let me ", "think.", signature="sig-1").text("Answer")
    wire.enqueue(reply.stop().response())
    outcome = stream_once(claude(wire), thinking="medium", temperature=0.3)

    assert outcome.shape == ["start", *THINKING, *TEXT, "done"]
    thinking = outcome.message.content[0]
    assert thinking == ThinkingContent("Let me think.", "sig-1")
    assert outcome.message.text == "Answer"
    body = wire.requests[0].json
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192 - 1024}
    assert "temperature" not in body  # the API refuses a temperature with thinking on


def test_temperature_is_sent_without_thinking(wire: WireServer) -> None:
    wire.enqueue(AnthropicStream().text("x").stop().response())
    stream_once(claude(wire), temperature=0.2)
    assert wire.requests[0].json["temperature"] == 0.2


def test_redacted_thinking_is_kept_for_replay(wire: WireServer) -> None:
    wire.enqueue(AnthropicStream().redacted_thinking("opaque-blob").text("Hi").stop().response())
    outcome = stream_once(claude(wire))

    assert outcome.message.content[0] == ThinkingContent("", "opaque-blob", redacted=True)
    assert outcome.shape[:3] == ["start", "thinking_start", "thinking_end"]


def test_one_tool_call_streams_arguments(wire: WireServer) -> None:
    reply = (
        AnthropicStream().text("Reading.").tool_use("toolu_1", "read", ['{"pa', 'th": "a.txt"}'])
    )
    wire.enqueue(reply.stop("tool_use").response())
    outcome = stream_once(claude(wire), simple_context(tools=[READ_TOOL]))

    assert outcome.shape == ["start", *TEXT, *TOOL_CALL, "done"]
    end = next(e for e in outcome.events if isinstance(e, ToolCallEndEvent))
    assert end.tool_call == ToolCall("toolu_1", "read", {"path": "a.txt"})
    assert outcome.message.stop_reason == "toolUse"
    assert outcome.terminal.reason == "toolUse"
    assert wire.requests[0].json["tools"] == [
        {"name": "read", "description": "Read a file", "input_schema": READ_TOOL.parameters}
    ]


def test_parallel_tool_calls_and_argumentless_tools(wire: WireServer) -> None:
    reply = (
        AnthropicStream()
        .tool_use("toolu_a", "read", ['{"path": ', '"x.py"}'])
        .tool_use("toolu_b", "status", [])
        .tool_use("toolu_c", "clock", ["", ""])
    )
    wire.enqueue(reply.stop("tool_use").response())
    message = stream_once(claude(wire)).message

    assert message.tool_calls == [
        ToolCall("toolu_a", "read", {"path": "x.py"}),
        ToolCall("toolu_b", "status", {}),
        ToolCall("toolu_c", "clock", {}),
    ]
    assert message.stop_reason == "toolUse"


def test_unicode_split_inside_characters_arrives_intact(wire: WireServer) -> None:
    text = "नमस्ते दुनिया 🎉👍🏽 — ok"
    wire.enqueue(AnthropicStream().text(text[:5], text[5:]).stop().bytes_split(7))
    message = stream_once(claude(wire)).message
    assert message.text == text
    assert message.stop_reason == "stop"


def test_unknown_events_blocks_and_deltas_are_ignored(wire: WireServer) -> None:
    reply = AnthropicStream()
    reply.event("brand_new_event", {"type": "brand_new_event", "value": 1})
    server_block = reply.block_start(
        {"type": "server_tool_use", "id": "srv_1", "name": "web_search"}
    )
    reply.delta(server_block, {"type": "input_json_delta", "partial_json": '{"q": 1}'})
    reply.block_stop(server_block)
    text_block = reply.block_start({"type": "text", "text": ""})
    reply.delta(text_block, {"type": "citations_delta", "citation": {"type": "char_location"}})
    reply.delta(text_block, {"type": "text_delta", "text": "fine"})
    reply.delta(text_block, {"type": "shiny_new_delta", "x": 1})
    reply.block_stop(text_block)
    wire.enqueue(reply.stop().response())
    outcome = stream_once(claude(wire))

    assert outcome.message.content == [TextContent("fine")]
    assert outcome.shape == ["start", *TEXT, "done"]


# --- stop reasons ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("native", "reason"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("pause_turn", "stop"),
        ("max_tokens", "length"),
        ("something_new", "stop"),
        (None, "stop"),
    ],
)
def test_stop_reasons_that_complete(wire: WireServer, native: str | None, reason: str) -> None:
    wire.enqueue(AnthropicStream().text("x").stop(native).response())
    outcome = stream_once(claude(wire))
    assert outcome.terminal.type == "done"
    assert outcome.terminal.reason == reason
    assert outcome.message.stop_reason == reason


def test_refusal_is_an_error_with_readable_text(wire: WireServer) -> None:
    details = {"type": "refusal", "category": "cyber", "explanation": "Malware request."}
    wire.enqueue(AnthropicStream().text("I can't").stop("refusal", stop_details=details).response())
    outcome = stream_once(claude(wire))

    assert outcome.terminal.type == "error"
    assert outcome.message.stop_reason == "error"
    assert outcome.message.text == "I can't"
    error = outcome.message.error_message or ""
    assert "refused" in error
    assert "cyber" in error
    assert "Malware request." in error


def test_context_window_exceeded_is_a_detectable_overflow(wire: WireServer) -> None:
    wire.enqueue(AnthropicStream().text("partial").stop("model_context_window_exceeded").response())
    message = stream_once(claude(wire)).message

    assert message.stop_reason == "error"
    assert "model_context_window_exceeded" in (message.error_message or "")
    assert is_context_overflow(message.error_message)


# --- failures --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "error_type", "text", "headers", "expected"),
    [
        (401, "authentication_error", "invalid x-api-key", {}, "401 Unauthorized"),
        (404, "not_found_error", "model: claude-nope", {}, "404 Not found"),
        (429, "rate_limit_error", "Slow down", {"retry-after": "7"}, "(retry after 7 s)"),
        (500, "api_error", "Internal server error", {}, "500 Server error"),
        (529, "overloaded_error", "Overloaded", {}, "529 Overloaded"),
    ],
)
def test_errors_before_the_stream_emit_only_an_error_event(
    wire: WireServer,
    status: int,
    error_type: str,
    text: str,
    headers: dict[str, str],
    expected: str,
) -> None:
    wire.enqueue(anthropic_error(status, error_type, text, headers))
    outcome = stream_once(claude(wire))

    assert [event.type for event in outcome.events] == ["error"]
    assert outcome.terminal.reason == "error"
    message = outcome.message
    assert message.content == []
    assert message.stop_reason == "error"
    error = message.error_message or ""
    assert expected in error
    assert text in error
    assert error.startswith(str(status))
    assert len(wire.requests) == 1  # the SDK did not retry
    if status == 429:
        assert retry_after_from_message(error) == 7


def test_error_event_mid_stream_keeps_partial_content(wire: WireServer) -> None:
    wire.enqueue(AnthropicStream().text("partial answer").error().response())
    outcome = stream_once(claude(wire))

    assert outcome.shape == ["start", *TEXT, "error"]
    message = outcome.message
    assert message.text == "partial answer"
    assert message.stop_reason == "error"
    assert message.error_message == "Overloaded"
    assert is_transient_error(message.error_message)


def test_error_event_with_details_reads_type_then_message(wire: WireServer) -> None:
    reply = AnthropicStream().error("api_error", "Internal hiccup, please retry")
    wire.enqueue(reply.response())
    message = stream_once(claude(wire)).message
    assert message.error_message == "Server error: Internal hiccup, please retry"


def test_cut_connection_keeps_partial_content(wire: WireServer) -> None:
    wire.enqueue(AnthropicStream().text("half an ans", stop=False).chunk(Cut()).response())
    outcome = stream_once(claude(wire))

    assert outcome.terminal.reason == "error"
    message = outcome.message
    assert message.text == "half an ans"
    assert message.stop_reason == "error"
    assert (message.error_message or "").startswith(CONNECTION_LOST)
    assert is_transient_error(message.error_message)


def test_stream_without_message_stop_is_an_error(wire: WireServer) -> None:
    wire.enqueue(AnthropicStream().text("all of it").message_delta("end_turn", 5).response())
    outcome = stream_once(claude(wire))

    assert outcome.terminal.reason == "error"
    assert outcome.message.text == "all of it"
    assert "ended before" in (outcome.message.error_message or "")


def test_idle_timeout_fails_a_silent_stream(wire: WireServer) -> None:
    wire.enqueue(AnthropicStream().text("waiting", stop=False).chunk(Stall()).response())
    message = stream_once(claude(wire), idle_timeout=0.3).message

    assert message.stop_reason == "error"
    assert message.text == "waiting"
    assert (message.error_message or "").startswith(TIMED_OUT)
    assert is_transient_error(message.error_message)


def test_the_shared_client_still_works_after_an_abort(wire: WireServer) -> None:
    wire.enqueue(
        AnthropicStream().text("partial", stop=False).chunk(Stall()).response(),
        AnthropicStream().text("second").stop().response(),
    )

    async def body() -> tuple[Outcome, Outcome]:
        aborted, _ = await stream_then_abort(
            claude(wire), simple_context(), abort_after=TextDeltaEvent
        )
        return aborted, await stream_all(claude(wire), simple_context())

    aborted, second = run(body)
    assert aborted.message.stop_reason == "aborted"
    assert second.message.text == "second"
    assert second.message.stop_reason == "stop"


def test_missing_api_key_names_the_variable(
    wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    outcome = stream_once(claude(wire), api_key=None)

    assert [event.type for event in outcome.events] == ["error"]
    assert "ANTHROPIC_API_KEY" in (outcome.message.error_message or "")
    assert wire.requests == []


def test_model_and_request_headers_are_sent(wire: WireServer) -> None:
    wire.enqueue(AnthropicStream().text("x").stop().response())
    model = claude(wire, headers=(("x-team", "core"), ("x-shared", "model")))
    stream_once(model, headers={"x-shared": "request"})

    headers = wire.requests[0].headers
    assert headers["x-team"] == "core"
    assert headers["x-shared"] == "request"


# --- history replay --------------------------------------------------------------------


def test_replayed_history_request_body(wire: WireServer) -> None:
    model = claude(wire)
    long_id = "call_" + "x" * 80
    history: list[object] = [
        UserMessage([TextContent("Look at this"), ImageContent(PNG, "image/png")]),
        past_reply(
            model,
            [
                ThinkingContent("Plan it.", "sig-own"),
                ThinkingContent("", "redacted-blob", redacted=True),
                ThinkingContent("unsigned musing"),
                TextContent("Reading both."),
                ToolCall("call_abc|fc_123", "read", {"path": "a.txt"}),
                ToolCall(long_id, "read", {"path": "b.txt"}),
                ToolCall("toolu_orphan", "bash", {"command": "ls"}),
            ],
        ),
        UserMessage("(steering) hurry up"),
        ToolResultMessage(
            "call_abc|fc_123", "read", [TextContent("A"), ImageContent(PNG, "image/png")]
        ),
        ToolResultMessage(long_id, "read", [TextContent("no such file")], is_error=True),
        past_reply(
            model,
            [ThinkingContent("foreign reasoning", "enc-xyz"), TextContent("Done.")],
            api="openai-responses",
            provider="openai",
            model="gpt-5",
            stop_reason="stop",
        ),
        past_reply(model, [], stop_reason="aborted"),
        past_reply(model, [TextContent("")], stop_reason="error", error_message="boom"),
        UserMessage("Next?"),
    ]
    wire.enqueue(AnthropicStream().text("ok").stop().response())
    context = Context(messages=history)  # type: ignore[arg-type]
    stream_once(model, context)

    body = wire.requests[0].json
    assert "system" not in body
    long_normalised = body["messages"][1]["content"][5]["id"]
    assert len(long_normalised) <= 64
    assert long_normalised.startswith("call_xxx")
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Look at this"}, image]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Plan it.", "signature": "sig-own"},
                {"type": "redacted_thinking", "data": "redacted-blob"},
                {"type": "text", "text": "unsigned musing"},
                {"type": "text", "text": "Reading both."},
                {"type": "tool_use", "id": "call_abc", "name": "read", "input": {"path": "a.txt"}},
                {
                    "type": "tool_use",
                    "id": long_normalised,
                    "name": "read",
                    "input": {"path": "b.txt"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_orphan",
                    "name": "bash",
                    "input": {"command": "ls"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_abc",
                    "is_error": False,
                    "content": [{"type": "text", "text": "A"}, image],
                },
                {
                    "type": "tool_result",
                    "tool_use_id": long_normalised,
                    "is_error": True,
                    "content": [{"type": "text", "text": "no such file"}],
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_orphan",
                    "is_error": True,
                    "content": [{"type": "text", "text": "No result provided"}],
                },
                {"type": "text", "text": "(steering) hurry up"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "foreign reasoning"},
                {"type": "text", "text": "Done."},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "text", "text": "Next?", "cache_control": {"type": "ephemeral"}}],
        },
    ]


def test_images_become_a_note_for_text_only_models(wire: WireServer) -> None:
    wire.enqueue(AnthropicStream().text("ok").stop().response())
    context = Context(messages=[UserMessage([TextContent("see"), ImageContent(PNG, "image/png")])])
    stream_once(claude(wire, input=("text",)), context)

    content = wire.requests[0].json["messages"][0]["content"]
    assert [block["type"] for block in content] == ["text", "text"]
    assert "image omitted" in content[1]["text"]
