"""openai-responses history replay: the request body built from a picode history."""

from __future__ import annotations

import json

from picode.ai.types import (
    Context,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tests.providers.models import READ_TOOL, past_reply
from tests.providers.sdk_streaming import answer_first_call, stream_once
from tests.providers.test_openai_responses import gpt
from tests.wire.responses_protocol import ResponsesStream
from tests.wire.server import WireServer

# --- history replay ---------------------------------------------------------------------


def test_replayed_history_builds_valid_input_items(wire: WireServer) -> None:
    model = gpt(wire)
    reasoning = json.dumps(
        {
            "type": "reasoning",
            "id": "rs_7",
            "summary": [{"type": "summary_text", "text": "look first"}],
            "encrypted_content": "ENCRYPTED",
        }
    )
    context = Context(
        system_prompt="sys",
        tools=[READ_TOOL],
        messages=[
            UserMessage([TextContent("Look at this"), ImageContent("aW1n", "image/png")]),
            past_reply(
                model,
                [
                    ThinkingContent("look first", reasoning),
                    TextContent("Reading.", "msg_7"),
                    ToolCall("call_7|fc_7", "read", {"path": "a.py"}),
                    ToolCall("call_8|fc_8", "read", {"path": "b.py"}),
                ],
            ),
            ToolResultMessage(
                "call_7|fc_7",
                "read",
                [TextContent("print('a')"), ImageContent("cG5n", "image/png")],
            ),
            # call_8 never got a result: a synthetic one is sent.
            past_reply(
                model,
                [
                    ThinkingContent("Other model's thoughts", "anthropic-signature"),
                    ThinkingContent("", "redacted-data", redacted=True),
                    TextContent("From Claude.", "not-a-msg-id"),
                    ToolCall("toolu_01:weird/id", "read", {"path": "c.py"}),
                ],
                api="anthropic-messages",
                provider="anthropic",
                model="claude-x",
            ),
            ToolResultMessage("toolu_01:weird/id", "read", [TextContent("c")], is_error=True),
            UserMessage("next"),
        ],
    )
    script = ResponsesStream().created().message(["fine"]).completed()
    wire.enqueue(script.response())

    stream_once(model, context)

    body = wire.requests[0].json
    assert body["instructions"] == "sys"
    assert body["input"] == [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Look at this"},
                {
                    "type": "input_image",
                    "image_url": "data:image/png;base64,aW1n",
                    "detail": "auto",
                },
            ],
        },
        {
            "type": "reasoning",
            "id": "rs_7",
            "summary": [{"type": "summary_text", "text": "look first"}],
            "encrypted_content": "ENCRYPTED",
        },
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_7",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Reading.", "annotations": []}],
        },
        {
            "type": "function_call",
            "call_id": "call_7",
            "name": "read",
            "arguments": '{"path": "a.py"}',
            "id": "fc_7",
        },
        {
            "type": "function_call",
            "call_id": "call_8",
            "name": "read",
            "arguments": '{"path": "b.py"}',
            "id": "fc_8",
        },
        {"type": "function_call_output", "call_id": "call_7", "output": "print('a')"},
        {"type": "function_call_output", "call_id": "call_8", "output": "No result provided"},
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Images returned by the tools above:"},
                {
                    "type": "input_image",
                    "image_url": "data:image/png;base64,cG5n",
                    "detail": "auto",
                },
            ],
        },
        {"role": "assistant", "content": "Other model's thoughts"},
        {"role": "assistant", "content": "From Claude."},
        {
            "type": "function_call",
            "call_id": "toolu_01_weird_id",
            "name": "read",
            "arguments": '{"path": "c.py"}',
        },
        {"type": "function_call_output", "call_id": "toolu_01_weird_id", "output": "c"},
        {"role": "user", "content": [{"type": "input_text", "text": "next"}]},
    ]


def test_reasoning_from_another_openai_model_is_not_replayed_as_an_item(wire: WireServer) -> None:
    model = gpt(wire)
    signature = json.dumps({"type": "reasoning", "id": "rs_1", "encrypted_content": "E"})
    context = Context(
        messages=[
            UserMessage("hi"),
            past_reply(
                model,
                [ThinkingContent("thought", signature), TextContent("answer", "msg_1")],
                model="gpt-other",
                stop_reason="stop",
            ),
            UserMessage("again"),
        ]
    )
    wire.enqueue(ResponsesStream().created().message(["ok"]).completed().response())

    stream_once(model, context)

    items = wire.requests[0].json["input"]
    assert {"role": "assistant", "content": "thought"} in items
    assert {"role": "assistant", "content": "answer"} in items
    assert not any(item.get("type") == "reasoning" for item in items)


def test_reasoning_without_encrypted_content_falls_back_to_text(wire: WireServer) -> None:
    model = gpt(wire)
    signature = json.dumps({"type": "reasoning", "id": "rs_1", "encrypted_content": None})
    context = Context(
        messages=[
            UserMessage("hi"),
            past_reply(model, [ThinkingContent("thought", signature)], stop_reason="stop"),
            UserMessage("again"),
        ]
    )
    wire.enqueue(ResponsesStream().created().message(["ok"]).completed().response())

    stream_once(model, context)

    items = wire.requests[0].json["input"]
    assert items[1] == {"role": "assistant", "content": "thought"}


def test_streamed_message_round_trips_into_the_next_request(wire: WireServer) -> None:
    model = gpt(wire)
    first = ResponsesStream().created().reasoning([["why"]], item_id="rs_5", encrypted="E5")
    first.function_call("read", ['{"path": "x"}'], call_id="call_5", item_id="fc_5")
    wire.enqueue(first.completed().response())
    wire.enqueue(ResponsesStream().created().message(["done"]).completed().response())

    answer_first_call(model, "X", thinking="medium")

    items = wire.requests[1].json["input"]
    assert items[1] == {
        "type": "reasoning",
        "id": "rs_5",
        "summary": [{"type": "summary_text", "text": "why"}],
        "encrypted_content": "E5",
    }
    assert items[2]["id"] == "fc_5"
    assert items[2]["call_id"] == "call_5"
    assert items[3] == {"type": "function_call_output", "call_id": "call_5", "output": "X"}


def test_images_become_a_note_for_text_only_models(wire: WireServer) -> None:
    model = gpt(wire, input=("text",))
    context = Context(messages=[UserMessage([ImageContent("aW1n", "image/png")])])
    wire.enqueue(ResponsesStream().created().message(["ok"]).completed().response())

    stream_once(model, context)

    content = wire.requests[0].json["input"][0]["content"]
    assert content == [
        {"type": "input_text", "text": "(image omitted: this model does not accept images)"}
    ]


def test_request_options_reach_the_body_and_headers(wire: WireServer) -> None:
    model = gpt(wire, reasoning=False, headers=(("x-team", "core"),))
    wire.enqueue(ResponsesStream().created().message(["ok"]).completed().response())

    stream_once(
        model,
        max_tokens=321,
        temperature=0.25,
        session_id="sess-1",
        thinking="high",
        headers={"x-extra": "1"},
    )

    request = wire.requests[0]
    body = request.json
    assert body["max_output_tokens"] == 321
    assert body["temperature"] == 0.25
    assert body["prompt_cache_key"] == "sess-1"
    assert "reasoning" not in body  # the model does not reason
    assert "include" not in body
    assert request.headers["x-team"] == "core"
    assert request.headers["x-extra"] == "1"
