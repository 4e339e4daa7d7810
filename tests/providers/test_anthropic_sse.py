"""anthropic-messages reads its server-sent events itself (``_sse``): the framing cases a
server may send, through the real SDK's request against the wire server."""

from __future__ import annotations

from functools import partial

from picode.ai.errors import is_transient_error
from tests.providers.models import wire_model
from tests.providers.sdk_streaming import TEXT, stream_once
from tests.wire.anthropic_protocol import AnthropicStream
from tests.wire.server import WireResponse, WireServer

claude = partial(wire_model, "anthropic-messages")


def _body(reply: AnthropicStream) -> bytes:
    return "".join(c for c in reply.chunks if isinstance(c, str)).encode("utf-8")


def _reply() -> AnthropicStream:
    return AnthropicStream().ping().text("Hel", "lo ", "wörld 🎉").stop("end_turn", 7)


def test_crlf_framing_cut_anywhere_with_comments_streams_the_reply(wire: WireServer) -> None:
    body = _body(_reply()).replace(b"\n\n", b"\n: keep-alive\n\n").replace(b"\n", b"\r\n")
    # 5-byte pieces cut CRLFs, UTF-8 characters and field names alike.
    wire.enqueue(WireResponse(body=[body[i : i + 5] for i in range(0, len(body), 5)]))
    outcome = stream_once(claude(wire))

    assert outcome.shape == ["start", *TEXT, "done"]
    assert outcome.message.text == "Hello wörld 🎉"
    assert (outcome.message.usage.input, outcome.message.usage.output) == (12, 7)


def test_events_without_a_name_are_skipped_as_the_sdk_does(wire: WireServer) -> None:
    reply = _reply()
    reply.chunks.insert(2, 'data: {"type": "content_block_start", "index": 9}\n\n')
    wire.enqueue(WireResponse(body=[_body(reply)]))
    assert stream_once(claude(wire)).message.text == "Hello wörld 🎉"


def test_an_error_event_that_is_not_json_is_an_error_with_its_text(wire: WireServer) -> None:
    reply = AnthropicStream().text("partial", stop=False)
    reply.chunk("event: error\ndata: upstream overloaded, try later\n\n")
    wire.enqueue(WireResponse(body=reply.chunks))
    outcome = stream_once(claude(wire))

    assert outcome.shape == ["start", *TEXT[:2], "error"]
    assert outcome.message.text == "partial"
    assert outcome.message.stop_reason == "error"
    assert "upstream overloaded, try later" in (outcome.message.error_message or "")


def test_an_error_event_split_over_data_lines_keeps_its_type(wire: WireServer) -> None:
    reply = AnthropicStream().text("partial", stop=False)
    reply.chunk(
        'event: error\ndata: {"type": "error",\n'
        'data: "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n'
    )
    wire.enqueue(WireResponse(body=reply.chunks))
    message = stream_once(claude(wire)).message

    assert message.error_message == "Overloaded"
    assert is_transient_error(message.error_message)


def test_data_that_is_not_json_fails_the_reply(wire: WireServer) -> None:
    reply = AnthropicStream().text("partial", stop=False)
    reply.chunk("event: content_block_delta\ndata: {not json\n\n")
    wire.enqueue(WireResponse(body=reply.chunks))
    outcome = stream_once(claude(wire))

    assert outcome.terminal.reason == "error"
    assert outcome.message.text == "partial"
    assert outcome.message.stop_reason == "error"
    assert (outcome.message.error_message or "").startswith("Malformed data")
