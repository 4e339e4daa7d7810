"""google-generative-ai history replay: the request body built from a picode history."""

from __future__ import annotations

import pytest

from picode.ai.providers.google_generative_ai import SYNTHETIC_ID_PREFIX, split_api_version
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
from tests.providers.test_google import SIG_A, SIG_B, SIG_C, camel, gemini
from tests.wire.gemini_protocol import GeminiStream, function_call, text
from tests.wire.server import WireServer

# --- request shape ----------------------------------------------------------------------


def test_replayed_history_builds_valid_contents(wire: WireServer) -> None:
    model = gemini(wire)
    synthetic = f"{SYNTHETIC_ID_PREFIX}abc"
    context = Context(
        system_prompt="sys",
        tools=[READ_TOOL],
        messages=[
            UserMessage([TextContent("Look"), ImageContent("aW1n", "image/png")]),
            past_reply(
                model,
                [
                    ThinkingContent("pondering", SIG_A),
                    TextContent("Reading.", SIG_B),
                    ToolCall("srv-1", "read", {"path": "a.py"}, SIG_C),
                    ToolCall(synthetic, "read", {"path": "b.py"}),
                    ToolCall("srv-3", "read", {"path": "c.py"}),
                ],
            ),
            ToolResultMessage(
                "srv-1", "read", [TextContent("A"), ImageContent("cG5n", "image/png")]
            ),
            ToolResultMessage(synthetic, "read", [TextContent("denied")], is_error=True),
            # srv-3 never got a result: a synthetic error result is sent.
            past_reply(
                model,
                [
                    ThinkingContent("claude thinks", "anthropic-sig"),
                    ThinkingContent("", "opaque", redacted=True),
                    TextContent("From Claude."),
                    ToolCall("toolu_9", "read", {"path": "d.py"}),
                ],
                api="anthropic-messages",
                provider="anthropic",
                model="claude-x",
            ),
            ToolResultMessage("toolu_9", "read", [TextContent("D")]),
            UserMessage("next"),
        ],
    )
    wire.enqueue(GeminiStream().chunk(text("ok"), finish="STOP").response())

    stream_once(model, context)

    contents = camel(wire.requests[0].json["contents"])
    assert contents == [
        {
            "role": "user",
            "parts": [
                {"text": "Look"},
                {"inlineData": {"mimeType": "image/png", "data": "aW1n"}},
            ],
        },
        {
            "role": "model",
            "parts": [
                {"text": "pondering", "thought": True, "thoughtSignature": SIG_A},
                {"text": "Reading.", "thoughtSignature": SIG_B},
                {
                    "functionCall": {"id": "srv-1", "name": "read", "args": {"path": "a.py"}},
                    "thoughtSignature": SIG_C,
                },
                {"functionCall": {"name": "read", "args": {"path": "b.py"}}},
                {"functionCall": {"id": "srv-3", "name": "read", "args": {"path": "c.py"}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"id": "srv-1", "name": "read", "response": {"output": "A"}}},
                {"functionResponse": {"name": "read", "response": {"error": "denied"}}},
                {
                    "functionResponse": {
                        "id": "srv-3",
                        "name": "read",
                        "response": {"error": "No result provided"},
                    }
                },
                {"text": "Images returned by the tools above:"},
                {"inlineData": {"mimeType": "image/png", "data": "cG5n"}},
            ],
        },
        {
            "role": "model",
            "parts": [
                {"text": "claude thinks"},
                {"text": "From Claude."},
                {"functionCall": {"name": "read", "args": {"path": "d.py"}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "read", "response": {"output": "D"}}},
                {"text": "next"},
            ],
        },
    ]


def test_signatures_from_another_gemini_model_are_not_replayed(wire: WireServer) -> None:
    model = gemini(wire)
    context = Context(
        messages=[
            UserMessage("hi"),
            past_reply(
                model,
                [ThinkingContent("thought", SIG_A), TextContent("answer", SIG_B)],
                model="gemini-other",
                stop_reason="stop",
            ),
            UserMessage("again"),
        ]
    )
    wire.enqueue(GeminiStream().chunk(text("ok"), finish="STOP").response())

    stream_once(model, context)

    assert camel(wire.requests[0].json["contents"][1]) == {
        "role": "model",
        "parts": [{"text": "thought"}, {"text": "answer"}],
    }


def test_streamed_turn_round_trips_into_the_next_request(wire: WireServer) -> None:
    model = gemini(wire)
    first = GeminiStream().chunk(text("plan", thought=True, signature=SIG_A))
    first.chunk(function_call("read", {"path": "x"}, signature=SIG_C), finish="STOP")
    wire.enqueue(first.response())
    wire.enqueue(GeminiStream().chunk(text("done"), finish="STOP").response())

    answer_first_call(model, "X", thinking="low")

    contents = camel(wire.requests[1].json["contents"])
    assert contents[1] == {
        "role": "model",
        "parts": [
            {"text": "plan", "thought": True, "thoughtSignature": SIG_A},
            {"functionCall": {"name": "read", "args": {"path": "x"}}, "thoughtSignature": SIG_C},
        ],
    }
    assert contents[2] == {
        "role": "user",
        "parts": [{"functionResponse": {"name": "read", "response": {"output": "X"}}}],
    }


def test_request_options_reach_config_and_headers(wire: WireServer) -> None:
    model = gemini(wire, reasoning=False, headers=(("x-team", "core"),))
    wire.enqueue(GeminiStream().chunk(text("ok"), finish="STOP").response())

    stream_once(
        model,
        max_tokens=123,
        temperature=0.5,
        thinking="high",
        headers={"x-extra": "1", "x-server-timeout": "42"},
    )

    request = wire.requests[0]
    config = request.json["generationConfig"]
    assert config["maxOutputTokens"] == 123
    assert config["temperature"] == 0.5
    assert "thinkingConfig" not in config  # the model does not think
    assert request.headers["x-team"] == "core"
    assert request.headers["x-extra"] == "1"
    assert request.headers["x-server-timeout"] == "42"  # the configuration wins


def test_base_url_with_a_version_keeps_that_version(wire: WireServer) -> None:
    model = gemini(wire, base_url=wire.url + "/v1beta")
    wire.enqueue(GeminiStream().chunk(text("ok"), finish="STOP").response())

    outcome = stream_once(model)

    assert outcome.message.text == "ok"
    assert wire.requests[0].path == "/v1beta/models/gemini-test:streamGenerateContent?alt=sse"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "https://generativelanguage.googleapis.com",
            ("https://generativelanguage.googleapis.com", None),
        ),
        ("https://proxy.example/gemini/v1beta/", ("https://proxy.example/gemini", "v1beta")),
        ("https://host/v1", ("https://host", "v1")),
        ("https://host/v2alpha1", ("https://host", "v2alpha1")),
        ("https://host/api", ("https://host/api", None)),
        (None, (None, None)),
    ],
)
def test_split_api_version(url: str | None, expected: tuple[str | None, str | None]) -> None:
    assert split_api_version(url) == expected


def test_gemini_3_gets_the_documented_placeholder_for_unsigned_calls(wire: WireServer) -> None:
    model = gemini(wire, id="gemini-3-pro-preview")
    context = Context(
        tools=[READ_TOOL],
        messages=[
            UserMessage("hi"),
            past_reply(
                model,
                [ToolCall("toolu_1", "read", {"path": "a.py"})],
                api="anthropic-messages",
                provider="anthropic",
                model="claude-x",
            ),
            ToolResultMessage("toolu_1", "read", [TextContent("A")]),
            past_reply(model, [ToolCall("srv-2", "read", {"path": "b.py"}, SIG_C)]),
            ToolResultMessage("srv-2", "read", [TextContent("B")]),
        ],
    )
    wire.enqueue(GeminiStream().chunk(text("ok"), finish="STOP").response())

    stream_once(model, context)

    contents = camel(wire.requests[0].json["contents"])
    assert contents[1]["parts"] == [
        {
            "functionCall": {"name": "read", "args": {"path": "a.py"}},
            "thoughtSignature": "skip_thought_signature_validator",
        }
    ]
    # A call Gemini signed keeps its own signature.
    assert contents[3]["parts"][0]["thoughtSignature"] == SIG_C
