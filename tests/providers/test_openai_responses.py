"""openai-responses through the real OpenAI SDK against a wire-faithful local server."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest

from picode.ai.errors import CONNECTION_LOST, TIMED_OUT, is_transient_error
from picode.ai.events import ErrorEvent, StartEvent, ToolCallEndEvent
from picode.ai.types import TextContent, ThinkingContent, ToolCall
from tests.providers.models import READ_TOOL, wire_model
from tests.providers.sdk_streaming import (
    TEXT,
    THINKING,
    TOOL_CALL,
    halved,
    simple_context,
    stream_once,
)
from tests.wire.responses_protocol import ResponsesStream, usage
from tests.wire.server import Cut, Stall, WireServer, json_response, sse

gpt = partial(wire_model, "openai-responses")


# --- happy paths ------------------------------------------------------------------------


def test_text_reply_events_usage_and_request(wire: WireServer) -> None:
    script = ResponsesStream(response_id="resp_42").created()
    script.message(["Hel", "lo", " there"]).completed(usage(1200, 30, cached=200))
    wire.enqueue(script.response())

    outcome = stream_once(gpt(wire))

    assert outcome.shape == ["start", *TEXT, "done"]
    message = outcome.message
    assert message.stop_reason == "stop"
    assert message.content == [TextContent("Hello there", "msg_1")]
    assert message.response_id == "resp_42"
    assert (message.usage.input, message.usage.output, message.usage.cache_read) == (1000, 30, 200)
    assert message.usage.total_tokens == 1230
    assert message.usage.cost.total == pytest.approx((1000 * 2 + 30 * 8 + 200 * 0.5) / 1e6)
    assert not message.usage.estimated

    request = wire.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/responses")
    assert request.headers["authorization"] == "Bearer test-key"
    assert request.headers["x-stainless-retry-count"] == "0"
    body = request.json
    assert body["stream"] is True
    assert body["store"] is False
    assert body["model"] == "gpt-test"
    assert body["instructions"] == "Be brief."
    assert body["input"] == [{"role": "user", "content": [{"type": "input_text", "text": "Hello"}]}]
    assert "reasoning" not in body  # no thinking level asked for


def test_thinking_summary_parts_join_and_reasoning_item_is_kept(wire: WireServer) -> None:
    script = ResponsesStream().created()
    script.reasoning([["Plan", "ning"], ["Then ", "act"]], item_id="rs_9", encrypted="ENC==")
    script.message(["Done"]).completed(usage(10, 5, reasoning=3))
    wire.enqueue(script.response())

    outcome = stream_once(gpt(wire), thinking="high")

    assert outcome.shape == ["start", *THINKING, *TEXT, "done"]
    thinking = outcome.message.content[0]
    assert isinstance(thinking, ThinkingContent)
    assert thinking.thinking == "Planning\n\nThen act"
    assert outcome.deltas(0) == "Planning\n\nThen act"
    assert json.loads(thinking.thinking_signature or "") == {
        "type": "reasoning",
        "id": "rs_9",
        "summary": [
            {"type": "summary_text", "text": "Planning"},
            {"type": "summary_text", "text": "Then act"},
        ],
        "encrypted_content": "ENC==",
    }
    body = wire.requests[0].json
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]


def test_summary_without_deltas_is_taken_from_the_done_events(wire: WireServer) -> None:
    script = ResponsesStream().created()
    script.reasoning([["first"], ["second"]], with_deltas=False).message(["ok"]).completed()
    wire.enqueue(script.response())

    outcome = stream_once(gpt(wire), thinking="low")

    thinking = outcome.message.content[0]
    assert isinstance(thinking, ThinkingContent)
    assert thinking.thinking == "first\n\nsecond"


def test_tool_call_streams_arguments_and_ends_with_tool_use(wire: WireServer) -> None:
    script = ResponsesStream().created()
    script.function_call(
        "read", ['{"pa', 'th": "src/', 'main.py"}'], call_id="call_A", item_id="fc_A"
    )
    wire.enqueue(script.completed(usage(50, 12)).response())

    outcome = stream_once(gpt(wire), simple_context(tools=[READ_TOOL]))

    assert outcome.shape == ["start", *TOOL_CALL, "done"]
    assert outcome.terminal.reason == "toolUse"
    assert outcome.message.content == [ToolCall("call_A|fc_A", "read", {"path": "src/main.py"})]
    assert outcome.deltas(0) == '{"path": "src/main.py"}'
    tool = wire.requests[0].json["tools"][0]
    assert tool == {
        "type": "function",
        "name": "read",
        "description": "Read a file",
        "parameters": READ_TOOL.parameters,
        "strict": False,
    }


def test_two_parallel_tool_calls_keep_their_own_ids_and_arguments(wire: WireServer) -> None:
    script = ResponsesStream().created().message(["Reading both."])
    script.function_call("read", ['{"path": "a.py"}'], call_id="call_1", item_id="fc_1")
    script.function_call("read", ['{"path": ', '"b.py"}'], call_id="call_2", item_id="fc_2")
    wire.enqueue(script.completed().response())

    outcome = stream_once(gpt(wire), simple_context(tools=[READ_TOOL]))

    assert outcome.message.stop_reason == "toolUse"
    assert outcome.message.tool_calls == [
        ToolCall("call_1|fc_1", "read", {"path": "a.py"}),
        ToolCall("call_2|fc_2", "read", {"path": "b.py"}),
    ]
    ends = [e for e in outcome.events if isinstance(e, ToolCallEndEvent)]
    assert [e.tool_call.id for e in ends] == ["call_1|fc_1", "call_2|fc_2"]


@pytest.mark.parametrize(
    ("done_event", "item_arguments"),
    [(True, False), (False, True), (True, True)],
    ids=["done-event-only", "finished-item-only", "both"],
)
def test_arguments_without_deltas_still_fill_the_call(
    wire: WireServer, done_event: bool, item_arguments: bool
) -> None:
    script = ResponsesStream().created()
    script.function_call(
        "read",
        ['{"path": "only/at/the/end.txt"}'],
        with_deltas=False,
        done_event=done_event,
        item_arguments=item_arguments,
    )
    wire.enqueue(script.completed().response())

    outcome = stream_once(gpt(wire), simple_context(tools=[READ_TOOL]))

    assert outcome.message.tool_calls[0].arguments == {"path": "only/at/the/end.txt"}
    assert outcome.terminal.reason == "toolUse"


def test_refusal_streams_as_text(wire: WireServer) -> None:
    script = ResponsesStream().created().message(["I can't ", "help with that."], refusal=True)
    wire.enqueue(script.completed().response())

    outcome = stream_once(gpt(wire))

    assert outcome.message.text == "I can't help with that."
    assert outcome.message.stop_reason == "stop"


def test_message_without_deltas_is_filled_from_the_done_event(wire: WireServer) -> None:
    script = ResponsesStream().created().message(["whole ", "text"], with_deltas=False)
    wire.enqueue(script.completed().response())

    outcome = stream_once(gpt(wire))

    assert outcome.message.text == "whole text"


def test_unicode_survives_bytes_split_inside_characters(wire: WireServer) -> None:
    text = "नमस्ते दुनिया 👋🏽 — ok"
    script = ResponsesStream().created().message([text[:5], text[5:]]).completed()
    wire.enqueue(halved(script.chunks))

    outcome = stream_once(gpt(wire), simple_context("नमस्ते 🌍"))

    assert outcome.message.text == text
    sent = wire.requests[0].json["input"][0]["content"][0]["text"]
    assert sent == "नमस्ते 🌍"


def test_unknown_events_and_items_are_ignored(wire: WireServer) -> None:
    script = ResponsesStream().created()
    script.event("response.brand_new_event", output_index=0, payload={"x": 1})
    script.event(
        "response.output_item.added",
        output_index=0,
        item={"id": "ws_1", "type": "web_search_call", "status": "in_progress"},
    )
    script.event("response.web_search_call.searching", output_index=0, item_id="ws_1")
    script.event(
        "response.output_item.done",
        output_index=0,
        item={"id": "ws_1", "type": "web_search_call", "status": "completed"},
    )
    script.output.append({"id": "ws_1", "type": "web_search_call", "status": "completed"})
    script.message(["after"]).completed()
    wire.enqueue(script.response())

    outcome = stream_once(gpt(wire))

    assert outcome.shape == ["start", *TEXT, "done"]
    assert outcome.message.text == "after"


def test_fields_of_the_wrong_type_count_as_missing(wire: WireServer) -> None:
    # Events are read as the service's JSON, not through the SDK's models: a field of an
    # unexpected type must be ignored, never trusted or crashed on.
    script = ResponsesStream().created()
    script.message(["kept"], stop_after_deltas=True)
    script.event("response.output_text.delta", output_index=0, content_index=0, delta=7)
    script.event("response.output_text.delta", output_index="0", content_index=0, delta=" lost")
    script.event("response.output_text.delta", output_index=0, content_index=0, delta=" too")
    script.event("response.output_item.done", output_index=0, item=["not", "an", "item"])
    script.event("response.completed", response={"status": "completed", "usage": "none"})
    wire.enqueue(script.response())

    outcome = stream_once(gpt(wire))

    assert outcome.terminal.reason == "stop"
    assert outcome.message.text == "kept too"
    assert outcome.message.usage.estimated  # the unusable usage is not taken


# --- how responses end ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ending", "reason", "stop_reason", "error_text"),
    [
        (lambda s: s.completed(), "stop", "stop", None),
        (lambda s: s.incomplete("max_output_tokens"), "length", "length", None),
        (
            lambda s: s.incomplete("content_filter"),
            "error",
            "error",
            "The response was stopped by the content filter",
        ),
        (
            lambda s: s.failed("server_error", "The model crashed"),
            "error",
            "error",
            "server_error: The model crashed",
        ),
        (
            lambda s: s.event("response.completed", response=s.snapshot("paused_forever")),
            "stop",
            "stop",
            None,
        ),
    ],
    ids=["completed", "incomplete", "content-filter", "failed", "unknown-status"],
)
def test_terminal_events_map_to_stop_reasons(
    wire: WireServer, ending: Any, reason: str, stop_reason: str, error_text: str | None
) -> None:
    script = ResponsesStream().created().message(["partial answer"])
    ending(script)
    wire.enqueue(script.response())

    outcome = stream_once(gpt(wire))

    assert outcome.terminal.reason == reason
    assert outcome.message.stop_reason == stop_reason
    assert outcome.message.error_message == error_text
    assert outcome.message.text == "partial answer"
    assert outcome.shape[-2:] == ["text_end", outcome.terminal.type]


@pytest.mark.parametrize(
    ("add_error", "expected"),
    [
        (lambda s: s.error("server_error", "Stream exploded"), "server_error: Stream exploded"),
        (
            lambda s: s.nested_error("rate_limit_exceeded", "Slow down"),
            "rate_limit_exceeded: Slow down",
        ),
    ],
    ids=["flat", "nested"],
)
def test_error_event_mid_stream_keeps_partial_content(
    wire: WireServer, add_error: Any, expected: str
) -> None:
    script = ResponsesStream().created().message(["Half an "], stop_after_deltas=True)
    add_error(script)
    wire.enqueue(script.response())

    outcome = stream_once(gpt(wire))

    assert isinstance(outcome.terminal, ErrorEvent)
    assert outcome.terminal.reason == "error"
    assert outcome.message.stop_reason == "error"
    assert outcome.message.error_message == expected
    assert is_transient_error(expected)  # the session will retry it
    assert outcome.message.text == "Half an "
    assert sum(isinstance(e, ErrorEvent) for e in outcome.events) == 1


@pytest.mark.parametrize(
    ("status", "headers", "payload", "expected"),
    [
        (
            401,
            {},
            {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}},
            "401 Unauthorized (check the API key): Incorrect API key provided",
        ),
        (
            404,
            {},
            {"error": {"message": "The model `gpt-test` does not exist", "code": None}},
            "404 Not found (check the model id and base URL): The model `gpt-test` does not exist",
        ),
        (
            429,
            {"retry-after": "7"},
            {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}},
            "429 Rate limited: Rate limit reached (retry after 7 s)",
        ),
        (
            429,
            {"retry-after-ms": "2500"},
            {"error": {"message": "Slow down", "code": "rate_limit_exceeded"}},
            "429 Rate limited: Slow down (retry after 2.5 s)",
        ),
        (
            500,
            {},
            {"error": {"message": "The server had an error", "type": "server_error"}},
            "500 Server error: The server had an error",
        ),
        (529, {}, {"error": {"message": "Overloaded", "type": "overloaded"}}, "529 Overloaded"),
    ],
    ids=["401", "404", "429", "429-ms", "500", "529"],
)
def test_http_errors_before_the_stream_give_one_error_event(
    wire: WireServer, status: int, headers: dict[str, str], payload: Any, expected: str
) -> None:
    wire.enqueue(json_response(status, payload, headers))

    outcome = stream_once(gpt(wire))

    assert outcome.shape == ["error"]
    assert not any(isinstance(e, StartEvent) for e in outcome.events)
    assert outcome.message.error_message == expected
    assert outcome.message.content == []
    assert len(wire.requests) == 1  # SDK retries are off


def test_cut_connection_keeps_partial_content(wire: WireServer) -> None:
    script = ResponsesStream().created().message(["Some ", "text"], stop_after_deltas=True)
    wire.enqueue(script.raw(Cut()).response())

    outcome = stream_once(gpt(wire))

    assert outcome.terminal.reason == "error"
    assert outcome.message.text == "Some text"
    assert (outcome.message.error_message or "").startswith(CONNECTION_LOST)
    assert outcome.message.usage.estimated


def test_stream_that_ends_without_a_terminal_event_is_an_error(wire: WireServer) -> None:
    script = ResponsesStream().created().message(["cut short"])
    wire.enqueue(script.response())

    outcome = stream_once(gpt(wire))

    assert outcome.terminal.reason == "error"
    assert outcome.message.text == "cut short"
    assert "ended" in (outcome.message.error_message or "")


def test_malformed_event_data_is_an_error_not_a_crash(wire: WireServer) -> None:
    script = ResponsesStream().created().message(["ok"], stop_after_deltas=True)
    script.raw("event: response.output_text.delta\ndata: {not json\n\n")
    wire.enqueue(script.response())

    outcome = stream_once(gpt(wire))

    assert outcome.terminal.reason == "error"
    assert outcome.message.text == "ok"
    assert "Malformed data" in (outcome.message.error_message or "")


def test_idle_timeout_fails_a_silent_stream(wire: WireServer) -> None:
    script = ResponsesStream().created().message(["waiting"], stop_after_deltas=True)
    wire.enqueue(script.raw(Stall()).response())

    outcome = stream_once(gpt(wire), idle_timeout=0.3)

    assert outcome.terminal.reason == "error"
    assert (outcome.message.error_message or "").startswith(TIMED_OUT)
    assert outcome.message.text == "waiting"


def test_missing_api_key_names_the_variable(
    wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    outcome = stream_once(gpt(wire), api_key=None)

    assert outcome.shape == ["error"]
    assert "OPENAI_API_KEY" in (outcome.message.error_message or "")
    assert wire.requests == []


def test_raw_sse_line_from_the_helper_is_wire_format() -> None:
    # The protocol helper writes exactly what the service writes.
    script = ResponsesStream().created()
    first = script.chunks[0]
    assert isinstance(first, str)
    head, data = first.split("\n", 1)
    assert head == "event: response.created"
    payload = json.loads(data.removeprefix("data: "))
    assert payload["type"] == "response.created"
    assert payload["sequence_number"] == 0
    assert first.endswith("\n\n")
    assert sse("x", {"a": 1}) == 'event: x\ndata: {"a": 1}\n\n'
