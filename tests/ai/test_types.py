"""Messages and content blocks survive JSON exactly; bad dicts fail with a clear ValueError."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from picode.ai import events
from picode.ai.types import (
    AssistantMessage,
    Context,
    Cost,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    content_from_dict,
    content_to_dict,
    message_from_dict,
    message_to_dict,
    tool_to_dict,
    usage_from_dict,
    usage_to_dict,
)

UNICODE = "héllo wörld — Devanagari देवनागरी, CJK 漢字かな, emoji 🧑‍💻🎉, RTL שלום, \u0000 nul"
PNG_BASE64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5Erk"
    "Jggg=="
)


def _through_json(message: Message) -> Message:
    text = json.dumps(message_to_dict(message), ensure_ascii=False)
    return message_from_dict(json.loads(text))


def _assistant(**overrides: Any) -> AssistantMessage:
    fields: dict[str, Any] = {
        "content": [
            ThinkingContent("let me think " + UNICODE, thinking_signature="sig-Θ=="),
            ThinkingContent("", thinking_signature="opaque-redacted-blob", redacted=True),
            TextContent("answer: " + UNICODE, text_signature="txt-sig"),
            ToolCall(
                "call_1|fc_9",
                "write",
                {"path": "a/ü.py", "content": "x\n\ty = '\"'\n", "n": [1, 2.5, None, True]},
                thought_signature="thought-sig",
            ),
            ToolCall("call_2", "ls", {}),
        ],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": Usage(
            input=1234,
            output=567,
            cache_read=89,
            cache_write=10,
            total_tokens=1900,
            cost=Cost(input=0.003702, output=0.008505, cache_read=2.67e-5, cache_write=3.75e-5),
        ),
        "stop_reason": "toolUse",
        "timestamp": 1_733_000_000_123,
        "response_id": "msg_01ABC",
    }
    fields.update(overrides)
    return AssistantMessage(**fields)


MESSAGES: list[Message] = [
    UserMessage("plain text " + UNICODE, timestamp=1),
    UserMessage([TextContent("look at this"), ImageContent(PNG_BASE64, "image/png")], timestamp=2),
    UserMessage("", timestamp=0),
    _assistant(),
    _assistant(
        content=[TextContent("partial")],
        stop_reason="error",
        error_message="429 Rate limited: slow down (retry after 7 s)",
        usage=Usage(input=10, output=3, total_tokens=13, estimated=True),
        response_id=None,
    ),
    _assistant(content=[], stop_reason="aborted", error_message="Request aborted"),
    _assistant(content=[TextContent("cut")], stop_reason="length"),
    ToolResultMessage(
        "call_1|fc_9",
        "write",
        [TextContent("wrote 2 lines " + UNICODE), ImageContent(PNG_BASE64, "image/jpeg")],
        details={"diff": "--- a\n+++ b\n", "lines": [1, 2], "nested": {"ok": None}},
        is_error=False,
        timestamp=5,
    ),
    ToolResultMessage("call_2", "ls", [TextContent("no such dir")], is_error=True, timestamp=6),
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: f"{m.role}")
def test_every_message_kind_round_trips_through_json_losslessly(message: Message) -> None:
    restored = _through_json(message)
    assert type(restored) is type(message)
    assert restored == message
    # And the dict form is stable: a second trip changes nothing.
    assert message_to_dict(restored) == message_to_dict(message)


@pytest.mark.parametrize(
    "block",
    [
        TextContent(UNICODE),
        TextContent("signed", text_signature="s1"),
        ThinkingContent("hmm", thinking_signature="abc"),
        ThinkingContent("", thinking_signature="redacted-data", redacted=True),
        ThinkingContent("unsigned"),
        ImageContent(PNG_BASE64, "image/webp"),
        ToolCall("id", "bash", {"command": "echo 'é' | wc -c", "timeout": 5}),
        ToolCall("id2", "edit", {"edits": [{"old": "a", "new": "b"}]}, thought_signature="ts"),
    ],
    ids=lambda b: f"{b.type}",
)
def test_every_content_block_round_trips(block: Any) -> None:
    data = json.loads(json.dumps(content_to_dict(block)))
    assert data["type"] == block.type
    assert content_from_dict(data) == block


def test_optional_fields_are_left_out_of_the_dict_when_unset() -> None:
    assert content_to_dict(TextContent("a")) == {"type": "text", "text": "a"}
    assert content_to_dict(ThinkingContent("t")) == {"type": "thinking", "thinking": "t"}
    assert "thought_signature" not in content_to_dict(ToolCall("i", "n", {}))
    plain = message_to_dict(_assistant(response_id=None))
    assert "error_message" not in plain
    assert "response_id" not in plain


def test_usage_and_cost_round_trip_including_the_estimated_flag() -> None:
    usage = Usage(1, 2, 3, 4, 10, Cost(0.1, 0.2, 0.3, 0.4, 1.0), estimated=True)
    assert usage_from_dict(json.loads(json.dumps(usage_to_dict(usage)))) == usage
    assert usage_from_dict(None) == Usage()
    assert usage_from_dict(usage_to_dict(Usage())).estimated is False


def test_context_tokens_prefers_the_reported_total() -> None:
    assert Usage(input=10, output=5, cache_read=100, total_tokens=0).context_tokens == 115
    assert Usage(input=10, output=5, total_tokens=99).context_tokens == 99


def test_unknown_role_is_a_value_error_naming_it() -> None:
    with pytest.raises(ValueError, match="'system'"):
        message_from_dict({"role": "system", "content": "x"})
    with pytest.raises(ValueError, match="None"):
        message_from_dict({"content": "x"})


def test_unknown_content_type_is_a_value_error_naming_it() -> None:
    with pytest.raises(ValueError, match="'audio'"):
        content_from_dict({"type": "audio", "data": ""})
    with pytest.raises(ValueError, match="'audio'"):
        message_from_dict({"role": "user", "content": [{"type": "audio"}]})


def test_malformed_dicts_raise_value_error_not_key_or_attribute_error() -> None:
    with pytest.raises(ValueError, match=r"'image'.*'mime_type'"):
        content_from_dict({"type": "image", "data": "xx"})
    with pytest.raises(ValueError, match=r"'toolCall'.*'name'"):
        content_from_dict({"type": "toolCall", "id": "a"})
    with pytest.raises(ValueError, match="must be an object"):
        content_from_dict("text")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"'toolResult'.*'tool_call_id'"):
        message_from_dict({"role": "toolResult", "content": []})
    with pytest.raises(ValueError, match="must be an object"):
        message_from_dict(["user"])  # type: ignore[arg-type]


def test_thinking_and_tool_calls_are_refused_in_user_content() -> None:
    with pytest.raises(ValueError, match="not allowed"):
        message_from_dict({"role": "user", "content": [{"type": "thinking", "thinking": "x"}]})
    with pytest.raises(ValueError, match="not allowed"):
        message_from_dict(
            {
                "role": "toolResult",
                "tool_call_id": "c",
                "content": [{"type": "toolCall", "id": "i", "name": "n"}],
            }
        )


def test_an_unknown_stop_reason_loads_as_error_and_bad_arguments_as_empty() -> None:
    data = message_to_dict(_assistant())
    data["stop_reason"] = "exploded"
    data["content"][3]["arguments"] = "not a dict"
    restored = message_from_dict(data)
    assert isinstance(restored, AssistantMessage)
    assert restored.stop_reason == "error"
    assert restored.tool_calls[0].arguments == {}


def test_a_missing_timestamp_is_filled_with_now() -> None:
    restored = message_from_dict({"role": "user", "content": "hi"})
    assert restored.timestamp > 1_600_000_000_000


def test_text_properties_join_only_text_blocks() -> None:
    message = _assistant()
    assert message.text == "answer: " + UNICODE
    assert [call.id for call in message.tool_calls] == ["call_1|fc_9", "call_2"]
    assert UserMessage([TextContent("a"), ImageContent("x", "image/png")]).text == "a"
    assert ToolResultMessage("c", "t", [TextContent("o"), TextContent("k")]).text == "ok"


def test_tool_to_dict() -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    assert tool_to_dict(Tool("read", "Read a file", schema)) == {
        "name": "read",
        "description": "Read a file",
        "parameters": schema,
    }


HOT_PATH_CLASSES = [
    TextContent,
    ThinkingContent,
    ImageContent,
    ToolCall,
    Cost,
    Usage,
    UserMessage,
    AssistantMessage,
    ToolResultMessage,
    Context,
    events.StartEvent,
    events.TextStartEvent,
    events.TextDeltaEvent,
    events.TextEndEvent,
    events.ThinkingStartEvent,
    events.ThinkingDeltaEvent,
    events.ThinkingEndEvent,
    events.ToolCallStartEvent,
    events.ToolCallDeltaEvent,
    events.ToolCallEndEvent,
    events.DoneEvent,
    events.ErrorEvent,
]


@pytest.mark.parametrize("cls", HOT_PATH_CLASSES, ids=lambda c: c.__name__)
def test_hot_path_classes_use_slots(cls: type) -> None:
    assert "__slots__" in cls.__dict__
    # An instance has no __dict__, so a typo'd attribute cannot be set silently.
    fields = {f.name: _dummy(f) for f in dataclasses.fields(cls) if _required(f)}
    instance = cls(**fields)
    assert not hasattr(instance, "__dict__")
    with pytest.raises(AttributeError):
        instance.not_a_field = 1


def _required(f: dataclasses.Field[Any]) -> bool:
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


def _dummy(f: dataclasses.Field[Any]) -> Any:
    if f.name in {"partial", "message"}:
        return AssistantMessage([], "api", "p", "m")
    if f.name == "tool_call":
        return ToolCall("i", "n")
    if f.name in {"content_index"}:
        return 0
    if f.name == "content":
        return []
    return "x"
