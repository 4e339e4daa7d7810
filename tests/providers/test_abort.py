"""Aborting a streamed reply, the same contract for every API through its real SDK."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from tests.providers.models import wire_model
from tests.providers.sdk_streaming import abort_at_first_text, abort_once_requested
from tests.wire.anthropic_protocol import AnthropicStream
from tests.wire.chat_protocol import ChatStream
from tests.wire.gemini_protocol import GeminiStream, text
from tests.wire.responses_protocol import ResponsesStream
from tests.wire.server import Stall, WireResponse, WireServer


@dataclass(frozen=True)
class AbortCase:
    api: str
    #: A reply that streams the text "partial", then goes silent with the connection open.
    partial_then_stall: Callable[[], WireResponse]
    #: A reply that goes silent before any content.
    stall_before_content: Callable[[], WireResponse]
    #: Whether the API reports token usage before the content (so an abort keeps it).
    usage_up_front: bool


CASES = [
    AbortCase(
        "anthropic-messages",
        lambda: AnthropicStream().text("partial", stop=False).chunk(Stall()).response(),
        lambda: AnthropicStream().chunk(Stall()).response(),
        usage_up_front=True,
    ),
    AbortCase(
        "openai-completions",
        lambda: ChatStream().text("partial").chunk(Stall()).response(),
        lambda: ChatStream().chunk(Stall()).response(),
        usage_up_front=False,
    ),
    AbortCase(
        "openai-responses",
        lambda: (
            ResponsesStream()
            .created()
            .message(["partial"], stop_after_deltas=True)
            .raw(Stall())
            .response()
        ),
        lambda: ResponsesStream().created().raw(Stall()).response(),
        usage_up_front=False,
    ),
    AbortCase(
        "google-generative-ai",
        lambda: GeminiStream().chunk(text("partial")).raw(Stall()).response(),
        lambda: GeminiStream().raw(Stall()).response(),
        usage_up_front=False,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.api)
def test_abort_mid_stream_closes_the_connection_and_keeps_partial(
    wire: WireServer, case: AbortCase
) -> None:
    wire.enqueue(case.partial_then_stall())
    outcome, closed = abort_at_first_text(wire_model(case.api, wire), wire)

    assert closed, "the server never saw the connection close after the abort"
    assert outcome.events[-1].type == "error"
    assert outcome.terminal.reason == "aborted"
    assert outcome.message.stop_reason == "aborted"
    assert outcome.message.text == "partial"
    if case.usage_up_front:
        assert outcome.message.usage.total_tokens > 0


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.api)
def test_abort_before_any_content_emits_only_the_aborted_event(
    wire: WireServer, case: AbortCase
) -> None:
    wire.enqueue(case.stall_before_content())
    outcome, closed = abort_once_requested(wire_model(case.api, wire), wire)

    assert closed, "the server never saw the connection close after the abort"
    types = [event.type for event in outcome.events]
    # The Responses API announces the response before any content; whether that arrives
    # before the abort is a race the test cannot decide. No content either way.
    assert types in (["error"], ["start", "error"]), types
    assert outcome.terminal.reason == "aborted"
    assert outcome.message.content == []
    assert outcome.message.stop_reason == "aborted"
