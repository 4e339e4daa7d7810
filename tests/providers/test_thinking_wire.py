"""Each thinking level as each model family's API receives it, through the real SDKs.

The models' thinking controls come from the packaged registry (ai/model_list/), so these tests
check the data and the request together; only the endpoint is the wire server's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from picode.ai.models import THINKING_LEVELS, Model, builtin_registry
from picode.ai.thinking import LOWEST, ThinkingControl, thinking_request
from tests.providers.models import wire_model
from tests.providers.sdk_streaming import stream_once
from tests.providers.test_google import camel
from tests.wire.anthropic_protocol import AnthropicStream
from tests.wire.chat_protocol import ChatStream
from tests.wire.gemini_protocol import GeminiStream, text
from tests.wire.responses_protocol import ResponsesStream, usage
from tests.wire.server import WireServer

REGISTRY = builtin_registry()


def packaged(ref: str, api: str, wire: WireServer) -> Model:
    """The packaged model ``ref``, served by the wire server."""
    model = REGISTRY.resolve(ref).model
    assert model.known, f"{ref} is not in the packaged list any more: pick a current model"
    served = wire_model(api, wire)
    return replace(model, base_url=served.base_url)


def bodies(wire: WireServer, model: Model, reply: Any, levels: tuple[str, ...]) -> dict[str, Any]:
    """The request body sent for each level, one request each."""
    for _ in levels:
        wire.enqueue(reply())
    for level in levels:
        outcome = stream_once(model, thinking=level)
        assert outcome.message.stop_reason == "stop", outcome.message.error_message
    return {level: request.json for level, request in zip(levels, wire.requests, strict=True)}


def claude_reply() -> Any:
    return AnthropicStream().text("ok").stop("end_turn", 1).response()


# --- Anthropic ---------------------------------------------------------------------------------


@pytest.mark.parametrize("model_id", ["claude-opus-4-6", "claude-sonnet-4-6"])
def test_adaptive_thinking_sends_each_effort_and_max_for_the_top_level(
    wire: WireServer, model_id: str
) -> None:
    model = packaged(f"anthropic/{model_id}", "anthropic-messages", wire)
    sent = bodies(wire, model, claude_reply, THINKING_LEVELS)

    assert "thinking" not in sent["off"]
    assert "output_config" not in sent["off"]
    efforts = {
        level: body["output_config"]["effort"] for level, body in sent.items() if level != "off"
    }
    # 4.6 takes low, medium, high and max: minimal rounds up, xhigh to max.
    assert efforts == {
        "minimal": "low",
        "low": "low",
        "medium": "medium",
        "high": "high",
        "xhigh": "max",
    }
    for level in THINKING_LEVELS[1:]:
        assert sent[level]["thinking"] == {"type": "adaptive"}  # 4.6 streams its thinking as is
        assert "budget_tokens" not in sent[level]["thinking"]


def test_opus_4_7_asks_for_summarized_thinking_and_takes_xhigh(wire: WireServer) -> None:
    model = packaged("anthropic/claude-opus-4-7", "anthropic-messages", wire)
    sent = bodies(wire, model, claude_reply, ("off", "medium", "xhigh"))

    assert "thinking" not in sent["off"]
    assert sent["medium"]["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert sent["medium"]["output_config"] == {"effort": "medium"}
    assert sent["xhigh"]["output_config"] == {"effort": "xhigh"}


# The SDK warns that 4.5 is near its end of life; the request is what is checked here.
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_a_budget_model_gets_token_budgets_that_grow_with_the_level(wire: WireServer) -> None:
    model = packaged("anthropic/claude-opus-4-5", "anthropic-messages", wire)
    sent = bodies(wire, model, claude_reply, THINKING_LEVELS)

    assert "thinking" not in sent["off"]
    budgets = [sent[level]["thinking"]["budget_tokens"] for level in THINKING_LEVELS[1:]]
    assert all(sent[level]["thinking"]["type"] == "enabled" for level in THINKING_LEVELS[1:])
    assert budgets == sorted(budgets) and len(set(budgets)) == len(budgets)
    assert all("output_config" not in body for body in sent.values())


def test_a_model_that_always_thinks_gets_its_lowest_effort_for_off(wire: WireServer) -> None:
    control = ThinkingControl(
        "adaptive", ("low", "medium", "high"), off=False, display="summarized"
    )
    model = replace(wire_model("anthropic-messages", wire), thinking=control)
    sent = bodies(wire, model, claude_reply, ("off",))

    assert sent["off"]["output_config"] == {"effort": "low"}
    assert thinking_request(model, "off").label == f"low ({LOWEST})"


def test_a_model_that_thinks_by_default_is_told_off(wire: WireServer) -> None:
    control = ThinkingControl("adaptive", ("low", "medium", "high"), off="disable")
    model = replace(wire_model("anthropic-messages", wire), thinking=control)
    sent = bodies(wire, model, claude_reply, ("off",))

    assert sent["off"]["thinking"] == {"type": "disabled"}
    assert "output_config" not in sent["off"]
    assert thinking_request(model, "off").label == "off"


# --- OpenAI ------------------------------------------------------------------------------------


def responses_reply() -> Any:
    return ResponsesStream().created().message(["ok"]).completed(usage(10, 1)).response()


def test_gpt_5_has_no_none_so_off_is_minimal_not_the_api_default(wire: WireServer) -> None:
    # gpt-5 is about to leave the packaged list; its control is what the generator writes.
    control = ThinkingControl("effort", ("minimal", "low", "medium", "high"), off=False)
    model = replace(wire_model("openai-responses", wire), id="gpt-5", thinking=control)
    sent = bodies(wire, model, responses_reply, ("off", "minimal", "xhigh"))

    assert sent["off"]["reasoning"]["effort"] == "minimal"
    assert sent["minimal"]["reasoning"]["effort"] == "minimal"
    assert sent["xhigh"]["reasoning"]["effort"] == "high"  # gpt-5's highest
    assert thinking_request(model, "off").label == f"minimal ({LOWEST})"


def test_gpt_5_4_turns_reasoning_off_with_none_and_takes_xhigh(wire: WireServer) -> None:
    model = packaged("openai/gpt-5.4", "openai-responses", wire)
    sent = bodies(wire, model, responses_reply, THINKING_LEVELS)

    assert sent["off"]["reasoning"] == {"effort": "none"}
    efforts = {level: sent[level]["reasoning"]["effort"] for level in THINKING_LEVELS[1:]}
    assert efforts == {
        "minimal": "low",
        "low": "low",
        "medium": "medium",
        "high": "high",
        "xhigh": "xhigh",
    }
    assert thinking_request(model, "off").label == "off"


def test_a_model_without_none_reasons_at_its_lowest_for_off(wire: WireServer) -> None:
    model = packaged("openai/gpt-5.4-pro", "openai-responses", wire)
    sent = bodies(wire, model, responses_reply, ("off",))

    assert sent["off"]["reasoning"]["effort"] == "low"


def test_openai_compatible_servers_get_reasoning_effort(wire: WireServer) -> None:
    control = ThinkingControl("effort", ("low", "medium", "high"), off=False)
    model = replace(wire_model("openai-completions", wire), thinking=control)
    sent = bodies(
        wire, model, lambda: ChatStream().text("ok").end("stop").response(), ("off", "xhigh")
    )

    assert sent["off"]["reasoning_effort"] == "low"
    assert sent["xhigh"]["reasoning_effort"] == "high"


# --- Gemini ------------------------------------------------------------------------------------


def gemini_reply() -> Any:
    return GeminiStream().chunk(text("ok"), finish="STOP").response()


def thinking_config(body: dict[str, Any]) -> dict[str, Any] | None:
    config = camel(body["generationConfig"]).get("thinkingConfig")
    return config if isinstance(config, dict) else None


@pytest.mark.parametrize(
    ("model_id", "expected"),
    [
        (
            "gemini-3.1-pro-preview",
            {"off": "LOW", "minimal": "LOW", "medium": "MEDIUM", "xhigh": "HIGH"},
        ),
        (
            "gemini-3-flash-preview",
            {"off": "MINIMAL", "minimal": "MINIMAL", "medium": "MEDIUM", "xhigh": "HIGH"},
        ),
    ],
)
def test_gemini_3_takes_a_thinking_level_and_cannot_turn_it_off(
    wire: WireServer, model_id: str, expected: dict[str, str]
) -> None:
    model = packaged(f"google/{model_id}", "google-generative-ai", wire)
    sent = bodies(wire, model, gemini_reply, tuple(expected))

    for level, wire_level in expected.items():
        config = thinking_config(sent[level])
        assert config == {"thinkingLevel": wire_level, "includeThoughts": True}, level
    assert thinking_request(model, "off").label.endswith(f"({LOWEST})")


def test_gemini_2_5_flash_budgets_and_an_explicit_zero_for_off(wire: WireServer) -> None:
    # 2.5 has left the packaged list; its control is what the generator writes for it.
    control = ThinkingControl("budget", off="disable")
    model = replace(
        wire_model("google-generative-ai", wire), id="gemini-2.5-flash", thinking=control
    )
    sent = bodies(wire, model, gemini_reply, ("off", "low", "high"))

    assert thinking_config(sent["off"]) == {"thinkingBudget": 0}
    low = thinking_config(sent["low"])
    high = thinking_config(sent["high"])
    assert low is not None and high is not None
    assert 0 < low["thinkingBudget"] < high["thinkingBudget"]


def test_gemini_2_5_pro_cannot_stop_thinking_so_off_is_its_smallest_budget(
    wire: WireServer,
) -> None:
    control = ThinkingControl("budget", off=False, min_budget=128)
    model = replace(wire_model("google-generative-ai", wire), id="gemini-2.5-pro", thinking=control)
    sent = bodies(wire, model, gemini_reply, ("off",))

    assert thinking_config(sent["off"]) == {"thinkingBudget": 128, "includeThoughts": True}
    assert thinking_request(model, "off").label == f"128 tokens ({LOWEST})"
