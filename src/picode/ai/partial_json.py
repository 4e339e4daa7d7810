"""Tool arguments that arrive as a stream of JSON fragments (docs/streaming.md).

``parse_streaming_json`` never raises: ``json.loads``, then a fast completion of the cut
(close the open string and brackets, parsed in C), then partial-json-parser, then ``{}``.
``StreamingJson`` collects fragments and tracks string/bracket state incrementally, so the
whole argument is scanned once in total, and parses only when a snapshot is asked for.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SPECIAL = re.compile(r'["\\\[\]{}]')
_IN_STRING_SPECIAL = re.compile(r'["\\]')
_CLOSERS = {"{": "}", "[": "]"}
_TRUNCATED_UNICODE_ESCAPE = re.compile(r"\\u[0-9a-fA-F]{0,3}$")
# A high surrogate whose low half has not arrived: alone it is not text (it cannot be
# encoded as UTF-8), so the snapshot leaves it out until the pair is complete.
_DANGLING_HIGH_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}$")
#: Below this many characters, re-parsing the whole text is as cheap as decoding a tail.
LONG_STRING_MIN = 2048


def parse_streaming_json(text: str | None) -> dict[str, Any]:
    """Best-effort object from complete or truncated JSON; ``{}`` for anything unusable."""
    if not text or not text.strip():
        return {}
    try:
        value = json.loads(text, strict=False)
    except ValueError:
        value = _parse_partial(text, _scan(text))
    return value if isinstance(value, dict) else {}


class StreamingJson:
    """Accumulates argument fragments; ``snapshot()`` parses lazily and caches.

    While a long string value is streaming (the ``content`` of a ``write``), a snapshot
    decodes only the characters that arrived since the previous one, so frequent snapshots
    stay cheap however long the argument grows.
    """

    __slots__ = ("_cached", "_cached_len", "_chunks", "_length", "_long", "_state", "_text")

    def __init__(self) -> None:
        self._chunks: list[str] = []
        self._text = ""
        self._length = 0
        self._state = _ScanState()
        self._cached: dict[str, Any] = {}
        self._cached_len = 0
        self._long: _LongStringValue | None = None

    def append(self, fragment: str) -> None:
        if fragment:
            self._chunks.append(fragment)
            self._length += len(fragment)
            self._state.feed(fragment)
            long = self._long
            if long is not None and long.path is not None:
                long.tail.append(fragment)

    @property
    def text(self) -> str:
        if self._chunks:
            self._text = self._text + "".join(self._chunks)
            self._chunks.clear()
        return self._text

    def __len__(self) -> int:
        return self._length

    def snapshot(self) -> dict[str, Any]:
        if self._length == self._cached_len:
            return self._cached
        value: Any = self._long_string_snapshot()
        if value is None:
            text = self.text
            if self._state.depth_is_zero_outside_string():
                try:
                    value = json.loads(text, strict=False)
                except ValueError:
                    value = _parse_partial(text, self._state)
            else:
                value = _parse_partial(text, self._state)
        self._cached = value if isinstance(value, dict) else {}
        self._cached_len = self._length
        return self._cached

    def final(self) -> dict[str, Any]:
        return parse_streaming_json(self.text)

    def _long_string_snapshot(self) -> dict[str, Any] | None:
        state = self._state
        start = state.string_start
        if not state.in_string or self._length - start < LONG_STRING_MIN:
            self._long = None
            return None
        long = self._long
        if long is None or long.start != start:
            long = self._long = _LongStringValue.begin(self.text, state)
        return long.snapshot(state.escape)


class _LongStringValue:
    """The open string value at the end of the text, decoded piece by piece.

    What precedes the string is parsed once, with a marker where the string goes; each
    snapshot decodes the new characters, then copies only the containers on the marker's
    path, so earlier snapshots are never changed.
    """

    __slots__ = ("base", "decoded", "path", "start", "tail")

    def __init__(self, start: int, base: Any, path: list[Any] | None, tail: str) -> None:
        self.start = start
        self.base = base
        self.path = path
        self.decoded: list[str] = []
        self.tail = [tail]

    @classmethod
    def begin(cls, text: str, state: _ScanState) -> _LongStringValue:
        start = state.string_start
        closers = "".join(_CLOSERS[opener] for opener in reversed(state.stack))
        try:
            base = json.loads(text[:start] + _MARKER_JSON + closers, strict=False)
        except ValueError:  # the string is a key, or what precedes it is not valid
            base = None
        return cls(start, base, _marker_path(base), text[start + 1 :])

    def snapshot(self, ends_in_escape: bool) -> dict[str, Any] | None:
        path = self.path
        if path is None:
            return None
        raw = self.tail[0] if len(self.tail) == 1 else "".join(self.tail)
        body = raw[:-1] if ends_in_escape else _drop_escape_at_end(raw, _TRUNCATED_UNICODE_ESCAPE)
        body = _drop_escape_at_end(body, _DANGLING_HIGH_SURROGATE)
        if body:
            try:
                self.decoded.append(json.loads('"' + body + '"', strict=False))
            except ValueError:
                self.path = None  # not a JSON string after all: leave it to the general path
                return None
        self.tail = [raw[len(body) :]]
        value = "".join(self.decoded)
        self.decoded = [value]
        root = _shallow_copy(self.base)
        node = root
        for key in path[:-1]:
            node[key] = node = _shallow_copy(node[key])
        node[path[-1]] = value
        return root if isinstance(root, dict) else None


_MARKER = "\x00picode-open-string\x00"
_MARKER_JSON = json.dumps(_MARKER)


def _marker_path(value: Any) -> list[Any] | None:
    """Keys from the root to the marker, following the last item of each container."""
    path: list[Any] = []
    while isinstance(value, dict | list) and value:
        key = next(reversed(value)) if isinstance(value, dict) else len(value) - 1
        path.append(key)
        value = value[key]
    return path if value == _MARKER and path else None


def _shallow_copy(value: Any) -> Any:
    return dict(value) if isinstance(value, dict) else list(value)


class _ScanState:
    """Where a JSON prefix stands: inside a string or not, and which brackets are open."""

    __slots__ = ("escape", "fed", "in_string", "stack", "string_start")

    def __init__(self) -> None:
        self.in_string = False
        self.escape = False
        self.stack: list[str] = []
        self.fed = 0  # characters seen so far
        self.string_start = -1  # where the open (or last) string's quote is

    def depth_is_zero_outside_string(self) -> bool:
        return not self.in_string and not self.stack

    def feed(self, fragment: str) -> None:
        pos = 0
        end = len(fragment)
        offset = self.fed
        self.fed = offset + end
        stack = self.stack
        while pos < end:
            if self.in_string:
                if self.escape:
                    self.escape = False
                    pos += 1
                    continue
                match = _IN_STRING_SPECIAL.search(fragment, pos)
                if match is None:
                    return
                if match.group() == "\\":
                    self.escape = True
                else:
                    self.in_string = False
                pos = match.end()
                continue
            match = _SPECIAL.search(fragment, pos)
            if match is None:
                return
            char = match.group()
            if char == '"':
                self.in_string = True
                self.string_start = offset + match.start()
            elif char in "[{":
                stack.append(char)
            elif stack:
                stack.pop()
            pos = match.end()


def _scan(text: str) -> _ScanState:
    state = _ScanState()
    state.feed(text)
    return state


def _parse_partial(text: str, state: _ScanState) -> Any:
    completed = _complete(text, state)
    if completed is not None:
        try:
            return json.loads(completed, strict=False)
        except ValueError:
            pass
    return _parse_with_library(text)


def _complete(text: str, state: _ScanState) -> str | None:
    """Close an open string and open brackets; None when the cut is not inside a value."""
    if not state.stack:
        return None
    body = text
    if state.in_string:
        # A lone trailing backslash, or a \u escape short of its four hex digits, is dropped.
        cut = body[:-1] if state.escape else _drop_escape_at_end(body, _TRUNCATED_UNICODE_ESCAPE)
        body = _drop_escape_at_end(cut, _DANGLING_HIGH_SURROGATE)
        body += '"'
    else:
        body = body.rstrip()
        if body.endswith(","):
            body = body[:-1]
    return body + "".join(_CLOSERS[opener] for opener in reversed(state.stack))


def _drop_escape_at_end(body: str, pattern: re.Pattern[str]) -> str:
    """Cut a ``\\u`` escape matched at the very end, unless its backslash is itself escaped."""
    tail = body[-6:]
    match = pattern.search(tail)
    if match is None:
        return body
    start = len(body) - len(tail) + match.start()
    backslashes = 0
    while start - backslashes - 1 >= 0 and body[start - backslashes - 1] == "\\":
        backslashes += 1
    # After an odd run of backslashes the matched one is escaped: "u..." is plain text.
    return body if backslashes % 2 else body[:start]


def _parse_with_library(text: str) -> Any:
    try:
        from partial_json_parser import loads
    except ImportError:  # pragma: no cover - a declared dependency
        return {}
    try:
        return loads(text)
    except Exception:
        return {}
