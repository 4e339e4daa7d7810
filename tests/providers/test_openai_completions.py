"""openai-completions through the real OpenAI SDK against the wire server."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from picode.ai.errors import CONNECTION_LOST, is_transient_error, retry_after_from_message
from picode.ai.events import ToolCallEndEvent
from picode.ai.providers.openai_completions import is_local_url
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
    simple_context,
    stream_once,
)
from tests.wire.chat_protocol import ChatStream, chat_error
from tests.wire.server import Cut, WireServer

local_model = partial(wire_model, "openai-completions")


# --- content ---------------------------------------------------------------------------


def test_text_reply_streams_exact_event_sequence(wire: WireServer) -> None:
    reply = (
        ChatStream().text("Hel", "lo ", "wörld").end("stop", prompt_tokens=30, completion_tokens=4)
    )
    wire.enqueue(reply.response())
    outcome = stream_once(local_model(wire))

    assert outcome.shape == ["start", *TEXT, "done"]
    assert outcome.deltas(0) == "Hello wörld"
    message = outcome.message
    assert message.text == "Hello wörld"
    assert message.stop_reason == "stop"
    assert message.response_id == "chatcmpl-test"
    assert (message.usage.input, message.usage.output, message.usage.cache_read) == (30, 4, 0)
    assert not message.usage.estimated

    request = wire.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer test-key"
    body = request.json
    assert body["model"] == "qwen-test"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hello"},
    ]
    for absent in ("max_tokens", "max_completion_tokens", "reasoning_effort", "tools"):
        assert absent not in body


def test_usage_subtracts_cached_prompt_tokens(wire: WireServer) -> None:
    reply = ChatStream().text("ok").end(prompt_tokens=1000, completion_tokens=10, cached_tokens=800)
    wire.enqueue(reply.response())
    usage = stream_once(local_model(wire)).message.usage

    assert (usage.input, usage.output, usage.cache_read) == (200, 10, 800)
    assert usage.total_tokens == 1010
    assert usage.cost.total == pytest.approx((200 * 1 + 10 * 2 + 800 * 0.5) / 1_000_000)


def test_usage_on_the_last_choice_chunk_is_read_too(wire: WireServer) -> None:
    reply = ChatStream().text("ok")
    finish = reply.envelope(
        [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        usage={"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12},
    )
    wire.enqueue(reply.data(finish).done().response())
    usage = stream_once(local_model(wire)).message.usage
    assert (usage.input, usage.output, usage.estimated) == (9, 3, False)


def test_missing_usage_is_estimated(wire: WireServer) -> None:
    wire.enqueue(ChatStream().text("x" * 400).finish("stop").done().response())
    usage = stream_once(local_model(wire)).message.usage
    assert usage.estimated
    assert usage.output == 100


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_fields_become_thinking(wire: WireServer, field: str) -> None:
    reply = ChatStream().reasoning("Think ", "hard.", field=field).text("Answer").end()
    wire.enqueue(reply.response())
    outcome = stream_once(local_model(wire), thinking="high")

    assert outcome.shape == ["start", *THINKING, *TEXT, "done"]
    assert outcome.message.content == [
        ThinkingContent("Think hard.", field),
        TextContent("Answer"),
    ]
    assert wire.requests[0].json["reasoning_effort"] == "high"


def test_one_tool_call_streams_arguments(wire: WireServer) -> None:
    reply = ChatStream().text("Reading.").tool_call(0, "call_1", "read", ['{"pa', 'th": "a.txt"}'])
    wire.enqueue(reply.end("tool_calls").response())
    outcome = stream_once(local_model(wire), simple_context(tools=[READ_TOOL]))

    assert outcome.shape == ["start", *TEXT, *TOOL_CALL, "done"]
    end = next(e for e in outcome.events if isinstance(e, ToolCallEndEvent))
    assert end.tool_call == ToolCall("call_1", "read", {"path": "a.txt"})
    assert outcome.terminal.reason == "toolUse"
    assert wire.requests[0].json["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read",
                "description": "Read a file",
                "parameters": READ_TOOL.parameters,
            },
        }
    ]


def test_parallel_tool_calls_by_index(wire: WireServer) -> None:
    reply = (
        ChatStream()
        .tool_call(0, "call_a", "read", ['{"path":', ' "x.py"}'])
        .tool_call(1, "call_b", "status", [])
    )
    wire.enqueue(reply.end("tool_calls").response())
    message = stream_once(local_model(wire)).message

    assert message.tool_calls == [
        ToolCall("call_a", "read", {"path": "x.py"}),
        ToolCall("call_b", "status", {}),
    ]
    assert message.stop_reason == "toolUse"


def test_calls_without_ids_and_reused_indexes_stay_distinct(wire: WireServer) -> None:
    reply = (
        ChatStream()
        .tool_call(0, None, "read", ['{"path": "a"}'])
        .tool_call(1, "id_1", "read", ['{"path": "b"}'])
        .tool_call(1, "id_2", "read", ['{"path": "c"}'])
    )
    wire.enqueue(reply.end("stop").response())
    message = stream_once(local_model(wire)).message

    calls = message.tool_calls
    assert [call.arguments for call in calls] == [{"path": "a"}, {"path": "b"}, {"path": "c"}]
    assert calls[0].id.startswith("call_")
    assert [call.id for call in calls[1:]] == ["id_1", "id_2"]
    assert message.stop_reason == "toolUse"  # "stop" with calls present still runs them


def test_unicode_split_inside_characters_arrives_intact(wire: WireServer) -> None:
    text = "नमस्ते दुनिया 🎉👍🏽 — ok"
    wire.enqueue(ChatStream().text(text[:4], text[4:]).end().bytes_split(5))
    message = stream_once(local_model(wire)).message
    assert message.text == text


def test_unknown_fields_and_choices_without_delta_are_ignored(wire: WireServer) -> None:
    reply = ChatStream()
    reply.choice({"content": "fine", "audio_hint": {"x": 1}, "annotations": []})
    reply.data(reply.envelope([{"index": 0, "delta": {}, "finish_reason": None}], brand_new=1))
    wire.enqueue(reply.end().response())
    outcome = stream_once(local_model(wire))
    assert outcome.message.content == [TextContent("fine")]
    assert outcome.terminal.reason == "stop"


# --- finish reasons --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("native", "reason"),
    [("stop", "stop"), ("length", "length"), ("tool_calls", "stop"), ("eos_token", "stop")],
)
def test_finish_reasons_that_complete(wire: WireServer, native: str, reason: str) -> None:
    wire.enqueue(ChatStream().text("x").end(native).response())
    outcome = stream_once(local_model(wire))
    assert outcome.terminal.type == "done"
    assert outcome.message.stop_reason == reason


def test_content_filter_is_an_error(wire: WireServer) -> None:
    wire.enqueue(ChatStream().text("Some").end("content_filter").response())
    outcome = stream_once(local_model(wire))

    assert outcome.terminal.reason == "error"
    assert outcome.message.text == "Some"
    assert "content filter" in (outcome.message.error_message or "")


def test_stream_without_finish_reason_is_an_error(wire: WireServer) -> None:
    wire.enqueue(ChatStream().text("all of it").done().response())
    outcome = stream_once(local_model(wire))

    assert outcome.terminal.reason == "error"
    assert outcome.message.text == "all of it"
    assert "ended before" in (outcome.message.error_message or "")


# --- failures --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "text", "headers", "expected"),
    [
        (401, "Incorrect API key provided", {}, "401 Unauthorized"),
        (404, "The model `nope` does not exist", {}, "404 Not found"),
        (429, "Rate limit reached", {"retry-after-ms": "1500"}, "(retry after 1.5 s)"),
        (500, "The server had an error", {}, "500 Server error"),
        (503, "Model is loading", {"retry-after": "20"}, "(retry after 20 s)"),
    ],
)
def test_errors_before_the_stream_emit_only_an_error_event(
    wire: WireServer, status: int, text: str, headers: dict[str, str], expected: str
) -> None:
    wire.enqueue(chat_error(status, text, headers))
    outcome = stream_once(local_model(wire))

    assert [event.type for event in outcome.events] == ["error"]
    message = outcome.message
    assert message.content == []
    assert message.stop_reason == "error"
    error = message.error_message or ""
    assert error.startswith(str(status))
    assert expected in error
    assert text in error
    assert len(wire.requests) == 1
    if status == 429:
        assert retry_after_from_message(error) == 1.5


def test_error_chunk_mid_stream_keeps_partial_content(wire: WireServer) -> None:
    reply = ChatStream().text("partial").error("Upstream provider overloaded", code=502)
    wire.enqueue(reply.response())
    outcome = stream_once(local_model(wire))

    assert outcome.shape == ["start", "text_start", "text_delta", "error"]
    message = outcome.message
    assert message.text == "partial"
    assert message.stop_reason == "error"
    assert "Upstream provider overloaded" in (message.error_message or "")
    assert is_transient_error(message.error_message)


def test_cut_connection_keeps_partial_content(wire: WireServer) -> None:
    wire.enqueue(ChatStream().text("half an ans").chunk(Cut()).response())
    message = stream_once(local_model(wire)).message

    assert message.stop_reason == "error"
    assert message.text == "half an ans"
    assert (message.error_message or "").startswith(CONNECTION_LOST)
    assert is_transient_error(message.error_message)
    assert message.usage.estimated


# --- keys and request options ----------------------------------------------------------


def test_local_server_needs_no_key(wire: WireServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LOCAL_API_KEY", raising=False)
    wire.enqueue(ChatStream().text("hi").end().response())
    message = stream_once(local_model(wire), api_key=None).message
    assert message.text == "hi"
    assert wire.requests[0].headers["authorization"].startswith("Bearer ")


def test_remote_server_without_key_names_the_variable(
    wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    model = local_model(wire, provider="openrouter", base_url="https://openrouter.example/api/v1")
    outcome = stream_once(model, api_key=None)

    assert [event.type for event in outcome.events] == ["error"]
    assert "OPENROUTER_API_KEY" in (outcome.message.error_message or "")


def test_key_from_the_provider_variable(wire: WireServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_API_KEY", "from-env")
    wire.enqueue(ChatStream().text("hi").end().response())
    stream_once(local_model(wire), api_key=None)
    assert wire.requests[0].headers["authorization"] == "Bearer from-env"


def test_request_options_reach_the_body(wire: WireServer) -> None:
    wire.enqueue(ChatStream().text("hi").end().response())
    stream_once(local_model(wire), max_tokens=512, temperature=0.1, headers={"x-a": "1"})

    request = wire.requests[0]
    assert request.json["max_tokens"] == 512
    assert request.json["temperature"] == 0.1
    assert request.headers["x-a"] == "1"


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://localhost:11434/v1", True),
        ("http://127.0.0.1:8080/v1", True),
        ("http://192.168.1.20:8000/v1", True),
        ("http://[::1]:8000/v1", True),
        ("https://openrouter.ai/api/v1", False),
        ("https://api.openai.com/v1", False),
        (None, False),
    ],
)
def test_is_local_url(url: str | None, local: bool) -> None:
    assert is_local_url(url) is local


# --- history replay --------------------------------------------------------------------


def test_replayed_history_request_body(wire: WireServer) -> None:
    model = local_model(wire)
    long_id = "call_" + "y" * 60
    history: list[object] = [
        UserMessage([TextContent("Look"), ImageContent(PNG, "image/png")]),
        past_reply(
            model,
            [
                ThinkingContent("Own reasoning.", "reasoning_content"),
                TextContent("Reading."),
                ToolCall("call_abc|fc_1", "read", {"path": "ä.txt"}),
                ToolCall(long_id, "read", {"path": "b"}),
                ToolCall("call_orphan", "bash", {"command": "ls"}),
            ],
        ),
        ToolResultMessage(
            "call_abc|fc_1", "read", [TextContent("A"), ImageContent(PNG, "image/png")]
        ),
        ToolResultMessage(long_id, "read", [], is_error=True),
        past_reply(
            model,
            [ThinkingContent("Foreign reasoning.", "sig"), TextContent("Done.")],
            api="anthropic-messages",
            provider="anthropic",
            model="claude-x",
            stop_reason="stop",
        ),
        past_reply(model, [], stop_reason="error", error_message="boom"),
        UserMessage("Next?"),
    ]
    wire.enqueue(ChatStream().text("ok").end().response())
    context = Context(system_prompt="sys", messages=history)  # type: ignore[arg-type]
    stream_once(model, context)

    messages = wire.requests[0].json["messages"]
    long_normalised = messages[2]["tool_calls"][1]["id"]
    assert len(long_normalised) <= 40
    image = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
    assert messages == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": [{"type": "text", "text": "Look"}, image]},
        {
            "role": "assistant",
            "content": "Reading.",
            "reasoning_content": "Own reasoning.",
            "tool_calls": [
                {
                    "id": "call_abc",
                    "type": "function",
                    "function": {
                        "name": "read",
                        "arguments": json.dumps({"path": "ä.txt"}, ensure_ascii=False),
                    },
                },
                {
                    "id": long_normalised,
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path": "b"}'},
                },
                {
                    "id": "call_orphan",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": "ls"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_abc", "content": "A"},
        {"role": "tool", "tool_call_id": long_normalised, "content": "(no output)"},
        {"role": "tool", "tool_call_id": "call_orphan", "content": "No result provided"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "Images returned by the tool:"}, image],
        },
        {"role": "assistant", "content": "Foreign reasoning.\n\nDone."},
        {"role": "user", "content": "Next?"},
    ]


def test_tool_only_assistant_message_has_null_content(wire: WireServer) -> None:
    model = local_model(wire)
    history: list[object] = [
        UserMessage("go"),
        past_reply(model, [ToolCall("call_1", "status", {})]),
        ToolResultMessage("call_1", "status", [TextContent("clean")]),
    ]
    wire.enqueue(ChatStream().text("ok").end().response())
    stream_once(model, Context(messages=history))  # type: ignore[arg-type]

    assistant = wire.requests[0].json["messages"][1]
    assert assistant["content"] is None
    assert assistant["tool_calls"][0]["function"] == {"name": "status", "arguments": "{}"}


# --- what a request loads --------------------------------------------------------------

FRESH_REPLY = """
import json, sys
from tests.providers.models import wire_model
from tests.providers.sdk_streaming import stream_once
from tests.wire.chat_protocol import ChatStream
from tests.wire.server import WireServer

with WireServer() as wire:
    wire.enqueue(ChatStream().text("Hel", "lo").end("stop").response())
    outcome = stream_once(wire_model("openai-completions", wire))
chat = [n for n in sys.modules if n.startswith(("openai.types.chat", "openai.resources.chat"))]
print(json.dumps([outcome.message.text, outcome.message.stop_reason, chat]))
"""


def test_a_reply_needs_none_of_the_sdks_chat_types() -> None:
    """The chunks are read as JSON: neither the SDK's chat resources nor its chat types
    (hundreds of pydantic models and typed dicts) are imported for a whole reply."""
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", FRESH_REPLY],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=root,
    )
    text, stop_reason, chat_modules = json.loads(done.stdout.strip().splitlines()[-1])
    assert (text, stop_reason) == ("Hello", "stop")
    assert chat_modules == []
