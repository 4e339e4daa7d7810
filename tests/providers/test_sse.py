"""The raw server-sent-events decoder (``picode.ai.providers._sse``) on its own."""

from __future__ import annotations

import pytest

from picode.ai.providers._sse import SseDecoder, SseEvent


def decode(*chunks: bytes) -> list[SseEvent]:
    decoder = SseDecoder()
    events: list[SseEvent] = []
    for chunk in chunks:
        events.extend(decoder.feed(chunk))
    return events + decoder.end()


TWO_EVENTS = b'event: a\ndata: {"x": 1}\n\nevent: b\ndata: {"y": "\xc3\xa9"}\n\n'
EXPECTED = [(b"a", b'{"x": 1}'), (b"b", b'{"y": "\xc3\xa9"}')]


def test_events_dispatch_on_their_blank_line() -> None:
    assert decode(TWO_EVENTS) == EXPECTED


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r"])
def test_every_cut_of_every_line_ending_gives_the_same_events(ending: bytes) -> None:
    body = TWO_EVENTS.replace(b"\n", ending)
    for size in range(1, len(body) + 1):
        chunks = [body[i : i + size] for i in range(0, len(body), size)]
        assert decode(*chunks) == EXPECTED, (ending, size)
    for cut in range(len(body) + 1):
        assert decode(body[:cut], body[cut:]) == EXPECTED, (ending, cut)


def test_a_crlf_cut_between_cr_and_lf_is_one_line_end() -> None:
    # A second line end would be a blank line: the event would go out without its data.
    assert decode(b"event: a\r", b"\ndata: 1\r", b"\n\r", b"\n") == [(b"a", b"1")]


def test_multi_line_data_is_joined_with_lf() -> None:
    assert decode(b"event: a\ndata: one\ndata:two\ndata\ndata:  three\n\n") == [
        (b"a", b"one\ntwo\n\n three")
    ]


def test_comments_ids_retries_and_unknown_fields_are_skipped() -> None:
    body = b": keep-alive\nid: 7\nretry: 10\nevent: a\nfoo: bar\ndata: 1\n:\n\n: only\n\n"
    assert decode(body) == [(b"a", b"1")]


def test_blank_lines_alone_dispatch_nothing() -> None:
    assert decode(b"\n\n\r\n\n") == []


def test_an_event_without_a_name_or_without_data() -> None:
    assert decode(b"data: 1\n\nevent: ping\n\n") == [(None, b"1"), (b"ping", b"")]


def test_the_field_value_keeps_all_but_one_leading_space() -> None:
    assert decode(b"event:a\ndata:x\n\nevent:  b\ndata:   y\n\n") == [
        (b"a", b"x"),
        (b" b", b"  y"),
    ]


def test_an_event_the_body_ends_inside_is_not_dispatched() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"event: a\ndata: 1\n") == []
    assert decoder.feed(b"event: b\ndata: 2") == []
    assert decoder.end() == []


def test_a_lone_cr_ending_the_body_ends_its_last_line() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"event: a\rdata: 1\r\r") == []  # the last CR may be a CRLF's
    assert decoder.end() == [(b"a", b"1")]


def test_a_utf8_character_cut_across_chunks_is_whole_in_the_data() -> None:
    body = "event: a\ndata: 🎉\n\n".encode()
    cut = body.index(b"\xf0") + 2
    ((_name, data),) = decode(body[:cut], body[cut:])
    assert data.decode() == "🎉"
