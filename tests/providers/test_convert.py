"""The history replay helpers every provider shares."""

from __future__ import annotations

import copy
import re

import pytest

from picode.ai.errors import MissingApiKeyError
from picode.ai.models import Model
from picode.ai.options import DEFAULT_CONNECT_TIMEOUT_S, StreamOptions
from picode.ai.providers._client import api_key_env_name, client_settings, resolve_api_key
from picode.ai.providers._convert import (
    SYNTHETIC_RESULT_TEXT,
    prepare_history,
    same_model,
    sanitize_tool_call_id,
    thinking_as_text,
    without_images,
)
from picode.ai.types import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserContent,
    UserMessage,
)

VALID_64 = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def assistant(*content: object, stop_reason: str = "toolUse") -> AssistantMessage:
    return AssistantMessage(
        list(content),  # type: ignore[arg-type]
        api="anthropic-messages",
        provider="anthropic",
        model="claude-test",
        stop_reason=stop_reason,  # type: ignore[arg-type]
    )


def result(call_id: str, text: str = "ok") -> ToolResultMessage:
    return ToolResultMessage(call_id, "tool", [TextContent(text)])


# --- ids -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("toolu_01AbC-9", "toolu_01AbC-9"),
        ("call_abc|fc_123", "call_abc"),
        ("|only-item", "_only-item"),
        ("call.with spaces/and:colons", "call_with_spaces_and_colons"),
    ],
)
def test_sanitize_tool_call_id(raw: str, expected: str) -> None:
    assert sanitize_tool_call_id(raw) == expected


def test_long_ids_are_shortened_deterministically_and_stay_distinct() -> None:
    first = "call_" + "a" * 100 + "1"
    second = "call_" + "a" * 100 + "2"
    short_first = sanitize_tool_call_id(first, max_length=40)
    assert len(short_first) == 40
    assert VALID_64.match(short_first)
    assert short_first == sanitize_tool_call_id(first, max_length=40)
    assert short_first != sanitize_tool_call_id(second, max_length=40)


def test_ids_without_usable_characters_get_one() -> None:
    made = sanitize_tool_call_id("")
    assert VALID_64.match(made)
    assert made == sanitize_tool_call_id("")


# --- history ---------------------------------------------------------------------------


def test_results_follow_their_calls_in_call_order_with_orphans_synthesised() -> None:
    history: list[Message] = [
        UserMessage("go"),
        assistant(ToolCall("a", "read"), ToolCall("b", "read"), ToolCall("c", "bash")),
        UserMessage("steer"),
        result("b", "B"),
        result("a", "A"),
        UserMessage("next"),
    ]
    prepared = prepare_history(history)

    assert [type(m).__name__ for m in prepared] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "ToolResultMessage",
        "ToolResultMessage",
        "UserMessage",
        "UserMessage",
    ]
    results = [m for m in prepared if isinstance(m, ToolResultMessage)]
    assert [r.tool_call_id for r in results] == ["a", "b", "c"]
    assert [r.text for r in results] == ["A", "B", SYNTHETIC_RESULT_TEXT]
    assert results[2].is_error
    assert results[2].tool_name == "bash"
    assert [m.text for m in prepared[-2:]] == ["steer", "next"]  # type: ignore[union-attr]


def test_trailing_calls_without_results_get_them() -> None:
    prepared = prepare_history([UserMessage("go"), assistant(ToolCall("x", "read"))])
    assert isinstance(prepared[-1], ToolResultMessage)
    assert prepared[-1].tool_call_id == "x"
    assert prepared[-1].is_error


def test_failed_turns_without_content_are_dropped_but_with_content_kept() -> None:
    empty_error = assistant(TextContent("  "), stop_reason="error")
    aborted_text = assistant(TextContent("half"), stop_reason="aborted")
    prepared = prepare_history([UserMessage("a"), empty_error, aborted_text, UserMessage("b")])
    assert prepared == [prepared[0], aborted_text, prepared[-1]]


def test_orphan_and_duplicate_results_become_user_text() -> None:
    history: list[Message] = [
        UserMessage("go"),
        result("ghost", "lost output"),
        assistant(ToolCall("a", "read")),
        result("a", "first"),
        result("a", "second"),
    ]
    prepared = prepare_history(history)

    orphan = prepared[1]
    assert isinstance(orphan, UserMessage)
    assert "lost output" in orphan.text
    assert "no longer in the history" in orphan.text
    assert isinstance(prepared[3], ToolResultMessage)
    assert prepared[3].text == "first"
    assert isinstance(prepared[4], UserMessage)
    assert "second" in prepared[4].text


def test_ids_are_normalised_on_calls_and_results_without_touching_the_input() -> None:
    history: list[Message] = [
        UserMessage("go"),
        assistant(ToolCall("call_1|fc_1", "read", {"p": 1})),
        result("call_1|fc_1"),
    ]
    before = copy.deepcopy(history)
    prepared = prepare_history(history, normalize_id=sanitize_tool_call_id)

    assert prepared[1].tool_calls[0].id == "call_1"  # type: ignore[union-attr]
    assert prepared[2].tool_call_id == "call_1"  # type: ignore[union-attr]
    assert history == before


# --- blocks and keys -------------------------------------------------------------------


def test_same_model_needs_provider_api_and_id() -> None:
    model = Model("claude-test", "Claude", "anthropic-messages", "anthropic")
    message = assistant()
    assert same_model(message, model)
    assert not same_model(message, Model("claude-other", "C", "anthropic-messages", "anthropic"))
    assert not same_model(message, Model("claude-test", "C", "anthropic-messages", "proxy"))


def test_thinking_as_text_drops_redacted_and_empty() -> None:
    assert thinking_as_text(ThinkingContent("why", "sig")) == TextContent("why")
    assert thinking_as_text(ThinkingContent("", "sig")) is None
    assert thinking_as_text(ThinkingContent("hidden", "blob", redacted=True)) is None


def test_without_images_only_for_text_models() -> None:
    blocks: list[UserContent] = [TextContent("a"), ImageContent("AAAA", "image/png")]
    vision = Model("v", "v", "openai-completions", "local", input=("text", "image"))
    text_only = Model("t", "t", "openai-completions", "local")
    assert without_images(blocks, vision) == blocks
    replaced = without_images(blocks, text_only)
    assert isinstance(replaced[1], TextContent)
    assert "image omitted" in replaced[1].text


def test_api_key_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    model = Model("m", "m", "openai-completions", "my-llm.io")
    assert api_key_env_name("my-llm.io") == "MY_LLM_IO_API_KEY"
    monkeypatch.delenv("MY_LLM_IO_API_KEY", raising=False)
    assert resolve_api_key(model, StreamOptions(api_key="given")) == "given"
    assert resolve_api_key(model, StreamOptions(), required=False) is None
    with pytest.raises(MissingApiKeyError, match="set MY_LLM_IO_API_KEY,"):
        resolve_api_key(model, StreamOptions())
    # A packaged provider's variables come from providers.json, the conventional name last.
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    gemini = Model("g", "g", "google-generative-ai", "google")
    with pytest.raises(MissingApiKeyError, match="set GEMINI_API_KEY or GOOGLE_API_KEY,"):
        resolve_api_key(gemini, StreamOptions())
    monkeypatch.setenv("GOOGLE_API_KEY", "google-key")
    assert resolve_api_key(gemini, StreamOptions()) == "google-key"
    monkeypatch.setenv("MY_LLM_IO_API_KEY", "from-env")
    assert resolve_api_key(model, StreamOptions()) == "from-env"


def test_every_sdk_client_gets_the_same_settings_and_timeouts() -> None:
    model = Model("m", "m", "openai-completions", "my-llm.io", headers=(("X-A", "model"),))
    options = StreamOptions(api_key="k", headers={"X-B": "request"}, idle_timeout=5.0)

    settings = client_settings(model, options)

    assert (settings.api_key, settings.headers) == ("k", {"X-A": "model", "X-B": "request"})
    # A dead host must not outwait the idle timeout by connecting slowly.
    assert (settings.idle_timeout_s, settings.connect_timeout_s) == (5.0, 5.0)
    patient = client_settings(model, StreamOptions(api_key="k", idle_timeout=600.0))
    assert patient.connect_timeout_s == DEFAULT_CONNECT_TIMEOUT_S
    # Settings that build a different client never share a cached one.
    assert settings.cache_key("a") != patient.cache_key("a")
    assert settings.cache_key("a") != settings.cache_key("b")
