"""Both OpenAI providers read their server-sent events themselves (``_openai_post``): the
framing a server may send, ``[DONE]``, and error events, through the real SDK's request
against the wire server."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
from openai import _streaming_cleanup

from picode.ai.errors import TIMED_OUT, is_transient_error
from picode.ai.models import Model
from picode.ai.providers import _openai_post
from tests.providers.models import wire_model
from tests.providers.sdk_streaming import (
    TEXT,
    Outcome,
    options,
    run,
    simple_context,
    stream_all,
    stream_once,
    wait_closed,
)
from tests.wire.chat_protocol import ChatStream
from tests.wire.responses_protocol import ResponsesStream, usage
from tests.wire.server import Chunk, Stall, WireResponse, WireServer, sse

chat = partial(wire_model, "openai-completions")
gpt = partial(wire_model, "openai-responses")


def _joined(chunks: list[Chunk]) -> bytes:
    return "".join(c for c in chunks if isinstance(c, str)).encode("utf-8")


def _chat_reply() -> ChatStream:
    return ChatStream().text("Hel", "lo ", "wörld 🎉").end("stop", prompt_tokens=30)


def _responses_reply() -> ResponsesStream:
    script = ResponsesStream().created().message(["Hel", "lo ", "wörld 🎉"])
    return script.completed(usage(30, 12))


def _stream_then_closed(model: Model, wire: WireServer) -> tuple[Outcome, bool]:
    """One reply, and whether the server then saw its connection close (checked before
    the test's SDK clients are closed, so only the reading can have closed it)."""

    async def body() -> tuple[Outcome, bool]:
        outcome = await stream_all(model, simple_context(), options())
        return outcome, await wait_closed(wire.requests[0])

    return run(body)


# --- framing ---------------------------------------------------------------------------


@pytest.mark.parametrize("api", ["completions", "responses"])
def test_crlf_framing_cut_anywhere_with_comments_streams_the_reply(
    wire: WireServer, api: str
) -> None:
    chunks = _chat_reply().body() if api == "completions" else _responses_reply().chunks
    body = _joined(chunks).replace(b"\n\n", b"\n: keep-alive\n\n").replace(b"\n", b"\r\n")
    # 5-byte pieces cut CRLFs, UTF-8 characters and field names alike.
    wire.enqueue(WireResponse(body=[body[i : i + 5] for i in range(0, len(body), 5)]))
    outcome = stream_once(chat(wire) if api == "completions" else gpt(wire))

    assert outcome.shape == ["start", *TEXT, "done"]
    assert outcome.message.text == "Hello wörld 🎉"
    assert outcome.message.stop_reason == "stop"
    assert (outcome.message.usage.input, outcome.message.usage.output) == (30, 12)


def test_a_chunk_split_over_data_lines_is_one_chunk(wire: WireServer) -> None:
    reply = ChatStream().text("Hel")
    reply.chunk('data: {"choices": [{"index": 0,\ndata: "delta": {"content": "lo"}}]}\n\n')
    wire.enqueue(reply.end().response())

    assert stream_once(chat(wire)).message.text == "Hello"


def test_events_without_data_json_objects_or_names_the_providers_read_are_skipped(
    wire: WireServer,
) -> None:
    reply = ChatStream().text("Hel")
    # Data-less events, JSON that is not an object, and the Assistants API's thread events
    # (which the SDK's stream handed on wrapped, with their error unchecked).
    reply.chunk("event: ping\n\n").chunk("data:\n\n").chunk("data: 42\n\n")
    reply.chunk('event: thread.run.failed\ndata: {"error": {"message": "not ours"}}\n\n')
    wire.enqueue(reply.text("lo").end().response())
    message = stream_once(chat(wire)).message

    assert (message.text, message.stop_reason) == ("Hello", "stop")


def test_an_empty_error_field_is_not_an_error(wire: WireServer) -> None:
    reply = ChatStream().text("Hel")
    reply.data(reply.envelope([{"index": 0, "delta": {"content": "lo"}}], error=None))
    wire.enqueue(reply.end().response())
    message = stream_once(chat(wire)).message

    assert (message.text, message.stop_reason) == ("Hello", "stop")


# --- where the reading ends ------------------------------------------------------------


def test_done_ends_the_reply_though_the_body_goes_on(wire: WireServer) -> None:
    reply = _chat_reply()
    # More after [DONE], then a server that never finishes the body: the reply is done at
    # [DONE], and the connection is closed once the short drain gives up.
    reply.text("not part of the reply").chunk(Stall())
    wire.enqueue(reply.response())
    outcome, closed = _stream_then_closed(chat(wire), wire)

    assert outcome.shape == ["start", *TEXT, "done"]
    assert outcome.message.text == "Hello wörld 🎉"
    assert closed


def test_the_body_after_done_is_drained_for_the_connection_to_be_reused(
    wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After ``[DONE]`` the rest of the body is read to its end, as the SDK's stream did, so
    the connection can go back to the pool. (Whether the pool then reuses it is the HTTP
    client's business: in full suite runs it sometimes opened another.)"""
    # The SDK gives a drain 0.1 s; a loaded machine can miss that, and then closing is right.
    monkeypatch.setattr(_streaming_cleanup, "_DRAIN_TIMEOUT", 30.0)
    drained: list[bool] = []
    drain = _openai_post.drain_response_async

    async def drain_seen(response: Any) -> None:
        await drain(response)
        drained.append(response.is_stream_consumed)

    monkeypatch.setattr(_openai_post, "drain_response_async", drain_seen)
    trailing = sse(None, {"choices": [{"index": 0, "delta": {"content": "ignored"}}]})
    for _ in range(2):
        wire.enqueue(_chat_reply().chunk(trailing).response())

    async def body() -> list[Outcome]:
        model = chat(wire)
        return [await stream_all(model, simple_context(), options()) for _ in range(2)]

    outcomes = run(body)

    assert [o.message.text for o in outcomes] == ["Hello wörld 🎉"] * 2
    assert len(wire.requests) == 2
    assert drained == [True, True]


def test_a_terminal_event_ends_the_responses_reply_though_the_body_goes_on(
    wire: WireServer,
) -> None:
    wire.enqueue(_responses_reply().raw(Stall()).response())
    outcome, closed = _stream_then_closed(gpt(wire), wire)

    assert outcome.shape == ["start", *TEXT, "done"]
    assert outcome.message.text == "Hello wörld 🎉"
    assert closed


def test_a_silent_chat_stream_times_out(wire: WireServer) -> None:
    wire.enqueue(ChatStream().text("waiting").chunk(Stall()).response())
    message = stream_once(chat(wire), idle_timeout=0.3).message

    assert message.stop_reason == "error"
    assert (message.error_message or "").startswith(TIMED_OUT)
    assert message.text == "waiting"


# --- error events ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "event",
    [
        'event: error\ndata: {"error": {"message": "Upstream overloaded", "code": 502}}\n\n',
        'data: {"error": {"message": "Upstream overloaded",\r\ndata:  "code": 502}}\r\n\r\n',
        'data: {"error": "Upstream overloaded"}\n\n',
    ],
    ids=["named", "split-crlf", "string"],
)
def test_an_error_chunk_mid_stream_keeps_the_partial_reply(wire: WireServer, event: str) -> None:
    wire.enqueue(ChatStream().text("partial").chunk(event).end().response())
    outcome = stream_once(chat(wire))

    assert outcome.shape == ["start", "text_start", "text_delta", "error"]
    message = outcome.message
    assert (message.text, message.stop_reason) == ("partial", "error")
    assert "Upstream overloaded" in (message.error_message or "")
    assert is_transient_error(message.error_message)


def test_an_error_chunk_without_a_message_is_still_an_error(wire: WireServer) -> None:
    wire.enqueue(ChatStream().text("partial").error("").end().response())
    message = stream_once(chat(wire)).message

    assert (message.text, message.stop_reason) == ("partial", "error")
    assert message.error_message


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (
            'event: error\r\ndata: {"type": "error",\r\n'
            'data: "error": {"code": "server_error", "message": "Stream exploded"}}\r\n\r\n',
            "server_error: Stream exploded",
        ),
        ('event: error\ndata: {"type": "error", "error": "Stream exploded"}\n\n', None),
    ],
    ids=["nested-split-crlf", "string"],
)
def test_an_error_event_mid_response_keeps_the_partial_reply(
    wire: WireServer, event: str, expected: str | None
) -> None:
    script = ResponsesStream().created().message(["Half an "], stop_after_deltas=True)
    # Nothing after the error is read.
    wire.enqueue(script.raw(event).completed().response())
    outcome = stream_once(gpt(wire))

    message = outcome.message
    assert outcome.terminal.reason == "error"
    assert (message.text, message.stop_reason) == ("Half an ", "error")
    if expected is not None:
        assert message.error_message == expected
    assert "Stream exploded" in (message.error_message or "")


def test_a_failed_response_mid_stream_keeps_the_partial_reply(wire: WireServer) -> None:
    script = ResponsesStream().created().message(["Half an "], stop_after_deltas=True)
    wire.enqueue(script.failed("server_error", "The model crashed").response())
    outcome = stream_once(gpt(wire))

    message = outcome.message
    assert (message.text, message.stop_reason) == ("Half an ", "error")
    assert message.error_message == "server_error: The model crashed"
