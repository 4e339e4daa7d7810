"""Streamed tool arguments (SPEC §3.4): never crash, recover, stay linear."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from picode.ai import partial_json
from picode.ai.partial_json import StreamingJson, parse_streaming_json

NESTED = {
    "path": "src/ü/main.py",
    "edits": [
        {"old": 'print("hi")\n', "new": "print('hé')\t# ok", "all": False},
        {"old": "a\\b", "new": "", "all": True},
    ],
    "limits": {"offset": -12, "ratio": 2.5e-3, "depth": [1, [2, [3, []]], {}]},
    "empty": {},
    "none": None,
    "yes": True,
}

ESCAPES = {"text": 'q"uote b\\ack é😀 tab\t nl\n end', "after": 1}


def _is_prefix_view(snapshot: Any, final: Any) -> bool:
    """A snapshot of a cut document must be a cut of the final value, never something else."""
    if isinstance(final, dict):
        return isinstance(snapshot, dict) and all(
            key in final and _is_prefix_view(value, final[key]) for key, value in snapshot.items()
        )
    if isinstance(final, list):
        return (
            isinstance(snapshot, list)
            and len(snapshot) <= len(final)
            and all(_is_prefix_view(s, f) for s, f in zip(snapshot, final, strict=False))
        )
    if isinstance(final, str):
        return isinstance(snapshot, str) and final.startswith(snapshot)
    if isinstance(final, bool) or final is None:
        return snapshot == final
    return isinstance(snapshot, int | float) and not isinstance(snapshot, bool)


def _utf8_safe(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@pytest.mark.parametrize("ensure_ascii", [True, False])
@pytest.mark.parametrize("document", [NESTED, ESCAPES], ids=["nested", "escapes"])
def test_every_cut_of_a_document_parses_to_a_cut_of_its_value(
    document: dict[str, Any], ensure_ascii: bool
) -> None:
    text = json.dumps(document, ensure_ascii=ensure_ascii)
    for end in range(len(text) + 1):
        prefix = text[:end]
        snapshot = parse_streaming_json(prefix)
        assert isinstance(snapshot, dict), prefix
        assert _is_prefix_view(snapshot, document), (prefix, snapshot)
        assert _utf8_safe(snapshot), (prefix, snapshot)
    assert parse_streaming_json(text) == document


@pytest.mark.parametrize(
    ("value", "escaped"),
    [
        ('say "hi"', r"say \"hi\""),
        ("back\\slash", r"back\\slash"),
        ("café", r"caf\u00e9"),
        ("😀!", r"\ud83d\ude00!"),
        ("lit\\u00e9", r"lit\\u00e9"),  # an escaped backslash, then plain "u00e9"
        ("\\", r"\\"),
    ],
)
def test_strings_cut_inside_an_escape_at_every_position_use_the_fast_path(
    value: str, escaped: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    library_calls: list[str] = []

    def count_library(text: str) -> Any:
        library_calls.append(text)
        return {}

    monkeypatch.setattr(partial_json, "_parse_with_library", count_library)
    head = '{"k": "'
    full = head + escaped + '"}'
    assert json.loads(full) == {"k": value}
    for end in range(len(head), len(head) + len(escaped) + 1):
        prefix = full[:end]
        for snapshot in (parse_streaming_json(prefix), _streamed(prefix).snapshot()):
            assert set(snapshot) == {"k"}, prefix
            assert value.startswith(snapshot["k"]), (prefix, snapshot)
            assert _utf8_safe(snapshot), prefix
    assert library_calls == []


def test_a_lone_high_surrogate_waits_for_its_pair() -> None:
    assert parse_streaming_json(r'{"k": "a\ud83d') == {"k": "a"}
    assert parse_streaming_json(r'{"k": "a\ud83d\ud') == {"k": "a"}
    assert parse_streaming_json(r'{"k": "a\ud83d\ude00') == {"k": "a😀"}


def test_raw_control_characters_inside_strings_are_accepted() -> None:
    text = '{"content": "line one\nline\ttwo\r\n", "x": 1}'
    assert parse_streaming_json(text) == {"content": "line one\nline\ttwo\r\n", "x": 1}
    cut = text[: len('{"content": "line one\nlin')]
    assert parse_streaming_json(cut) == {"content": "line one\nlin"}
    assert _streamed(cut).snapshot() == {"content": "line one\nlin"}


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "   \n",
        "garbage",
        "}{",
        "]]",
        "not json {",
        "{]",
        "[1, 2, 3]",
        "[{",
        '"a string"',
        "42",
        "-1.5",
        "true",
        "null",
        "{'single': 'quotes'}",
        "\x00\x01binary",
    ],
)
def test_garbage_and_non_objects_give_an_empty_dict(text: str | None) -> None:
    assert parse_streaming_json(text) == {}
    stream = StreamingJson()
    stream.append(text or "")
    assert stream.snapshot() == {}
    assert stream.final() == {}


@pytest.mark.parametrize(
    ("prefix", "key", "allowed"),
    [
        ('{"a": tr', "a", [True]),
        ('{"a": fal', "a", [False]),
        ('{"a": nu', "a", [None]),
        ('{"a": -', "a", []),
        ('{"a": 12', "a", [12]),
        ('{"a": 1.', "a", [1, 1.0]),
        ('{"a": 1.5e', "a", [1.5]),
        ('{"a": [1, 2', "a", [[1], [1, 2]]),
        ('{"a": {"b": [', "a", [{"b": []}, {}]),
    ],
)
def test_literals_and_numbers_cut_midway_never_crash(
    prefix: str, key: str, allowed: list[Any]
) -> None:
    for snapshot in (parse_streaming_json(prefix), _streamed(prefix).snapshot()):
        assert isinstance(snapshot, dict)
        assert key not in snapshot or snapshot[key] in allowed, snapshot


def test_arguments_recover_on_later_deltas() -> None:
    stream = StreamingJson()
    stream.append('{"pa')
    assert stream.snapshot() == {}
    stream.append('th": "/tmp/x')
    assert stream.snapshot() == {"path": "/tmp/x"}
    stream.append('yz", "content": "')
    assert stream.snapshot() == {"path": "/tmp/xyz", "content": ""}
    stream.append('hello"}')
    assert stream.snapshot() == {"path": "/tmp/xyz", "content": "hello"}
    assert stream.final() == {"path": "/tmp/xyz", "content": "hello"}
    assert stream.text == '{"path": "/tmp/xyz", "content": "hello"}'
    assert len(stream) == len(stream.text)


def test_snapshot_is_cached_until_more_text_arrives(monkeypatch: pytest.MonkeyPatch) -> None:
    parses: list[str] = []
    real = partial_json._parse_partial

    def counting(text: str, state: Any) -> Any:
        parses.append(text)
        return real(text, state)

    monkeypatch.setattr(partial_json, "_parse_partial", counting)
    stream = StreamingJson()
    stream.append('{"a": "b')
    first = stream.snapshot()
    assert stream.snapshot() is first
    assert len(parses) == 1
    stream.append("")  # nothing new
    assert stream.snapshot() is first
    stream.append("c")
    assert stream.snapshot() == {"a": "bc"}
    assert len(parses) == 2


def test_incremental_snapshots_match_one_shot_parsing_for_any_chunking() -> None:
    rng = random.Random(1234)
    text = json.dumps(NESTED, ensure_ascii=False)
    for _ in range(30):
        stream = StreamingJson()
        pos = 0
        while pos < len(text):
            size = rng.randint(1, 7)
            stream.append(text[pos : pos + size])
            pos += size
            assert stream.snapshot() == parse_streaming_json(text[:pos]), text[:pos]
        assert stream.final() == NESTED


LONG_STRING_DOCS = [
    NESTED,
    ESCAPES,
    {"edits": [{"old": "x", "new": 'long "value" é😀\\ \n' * 3}, {"new": "b" * 40}]},
    {"a": [["deep", ["deeper", "still 😀 open"]]]},
    {"dup": 1, "k": {"x": 2}, "dup": "later value wins"},  # noqa: F601 - on purpose
]


@pytest.mark.parametrize("document", LONG_STRING_DOCS)
def test_the_long_string_path_agrees_with_a_full_parse_at_every_cut(
    document: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every open string counts as long, so the incremental path runs on every snapshot.
    monkeypatch.setattr(partial_json, "LONG_STRING_MIN", 0)
    rng = random.Random(99)
    for ensure_ascii in (True, False):
        text = json.dumps(document, ensure_ascii=ensure_ascii)
        for _ in range(8):
            stream = StreamingJson()
            pos = 0
            while pos < len(text):
                size = rng.randint(1, 5)
                stream.append(text[pos : pos + size])
                pos += size
                assert stream.snapshot() == parse_streaming_json(text[:pos]), text[:pos]
            assert stream.final() == document


def test_earlier_snapshots_are_not_changed_by_later_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(partial_json, "LONG_STRING_MIN", 0)
    stream = StreamingJson()
    stream.append('{"meta": {"n": 1}, "edits": [{"new": "abc')
    first = stream.snapshot()
    assert first == {"meta": {"n": 1}, "edits": [{"new": "abc"}]}
    stream.append("def")
    second = stream.snapshot()
    assert second == {"meta": {"n": 1}, "edits": [{"new": "abcdef"}]}
    assert first == {"meta": {"n": 1}, "edits": [{"new": "abc"}]}
    assert second is not first


def test_a_long_key_or_odd_prefix_falls_back_to_the_general_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(partial_json, "LONG_STRING_MIN", 0)
    for text in ['{"a": 1, "a very long key', 'garbage {"a": "text', '[{"a": "x']:
        stream = StreamingJson()
        stream.append(text)
        assert stream.snapshot() == parse_streaming_json(text), text


def test_a_200_kb_argument_in_16_byte_deltas_is_scanned_once_and_never_hits_the_slow_parser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scanned: list[int] = []
    real_feed = partial_json._ScanState.feed

    def counting_feed(self: Any, fragment: str) -> None:
        scanned.append(len(fragment))
        real_feed(self, fragment)

    library_calls: list[int] = []

    def counting_library(text: str) -> Any:
        library_calls.append(len(text))
        return {}

    decoded: list[int] = []

    class FakeJson:
        """Stands in for the ``json`` module and counts what it decodes."""

        @staticmethod
        def loads(text: str, **kwargs: Any) -> Any:
            decoded.append(len(text))
            return json.loads(text, **kwargs)

        dumps = staticmethod(json.dumps)

    monkeypatch.setattr(partial_json._ScanState, "feed", counting_feed)
    monkeypatch.setattr(partial_json, "_parse_with_library", counting_library)
    monkeypatch.setattr(partial_json, "json", FakeJson)

    content = "".join(f'line {i}: "quoted" \\ tab\t é 😀\n' for i in range(5000))
    text = json.dumps({"path": "big.txt", "content": content})
    assert len(text) >= 200_000
    stream = StreamingJson()
    snapshots = 0
    for number, start in enumerate(range(0, len(text), 16), 1):
        stream.append(text[start : start + 16])
        if number % 50 == 0:
            snapshot = stream.snapshot()
            snapshots += 1
            assert content.startswith(snapshot.get("content", ""))
    assert snapshots > 200
    # Every character went through the incremental scanner exactly once ...
    assert sum(scanned) == len(text)
    # ... inside the long string no snapshot needed the slow parser ...
    assert library_calls == []
    # ... and the snapshots together decoded about the text once, not once per snapshot
    # (re-parsing everything each time would be over a hundred times the text).
    assert sum(decoded) < 2 * len(text)
    assert stream.final() == {"path": "big.txt", "content": content}


def _streamed(text: str) -> StreamingJson:
    stream = StreamingJson()
    for start in range(0, len(text), 3):
        stream.append(text[start : start + 3])
    return stream
