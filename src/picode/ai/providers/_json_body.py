"""Request bodies encoded by picode, sent to the SDKs as bytes.

Every request carries the whole conversation, and an SDK's own route walks all of it once
more per request: the Anthropic SDK copies the params tree (``copy_tree``), the OpenAI SDK
runs its typed transform over it (``async_maybe_transform``), then each JSON-encodes it.
After a few hundred long replies that was ~20 ms before each request left, growing with
every reply (docs/benchmarks.md, "Long sessions"). The providers build their params as
plain wire-format dicts already, so they encode them here and hand the SDK the bytes
(``client.post(..., content=...)``), which it sends as they are.

Most of the encoding time is escaping the long strings (replies, tool outputs, file
contents, images), and almost all of them were in the previous request too. The encoder
keeps the escaped form of each long string of the last request, keyed by the string
itself: a ``str`` is immutable, so its JSON form never changes, and an edit, a compaction
or a model switch simply sends other strings (nothing to invalidate). Its hash is cached
in the object and a lookup of the same object compares by identity, so a hit costs no
pass over the text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

#: Shorter strings are escaped each time: a lookup would cost about what escaping does.
MIN_CACHED = 256
#: Stands for a long string in the encoder's output: a raw NUL never appears in JSON text
#: otherwise (every control character in a string is escaped).
_MARK = "\x00"


class BodyEncoder:
    """Compact UTF-8 JSON (as the SDKs send it: no ASCII escaping, no NaN), reusing the
    encoded long strings of the previous body.

    The C encoder writes a mark in place of each long string, so the text it builds is
    only the small rest of the body; the long strings join it as the bytes kept from the
    last request. The body is then one new buffer, not three (the encoder's text, its
    UTF-8 copy, and the escaped strings): for a 2.6 MB history, fresh buffers cost more
    than the copying, one page fault per 4 kB.
    """

    __slots__ = ("_escaped", "escapes")

    def __init__(self) -> None:
        self._escaped: dict[str, bytes] = {}
        #: Long strings escaped (not found in the previous body): what tests count.
        self.escapes = 0

    def encode(self, body: Mapping[str, Any]) -> bytes:
        if c_make_encoder is None:  # an interpreter without the C accelerator: no reuse
            return json.dumps(body, **_OPTIONS, default=_default).encode()  # type: ignore[arg-type]
        previous = self._escaped
        used: dict[str, bytes] = {}
        long: list[bytes] = []

        def escape(text: str) -> str:
            if len(text) < MIN_CACHED:
                return encode_basestring(text)
            found = used.get(text)
            if found is None:
                found = previous.get(text)
                if found is None:
                    found = encode_basestring(text).encode()
                    self.escapes += 1
                used[text] = found
            long.append(found)
            return _MARK

        try:
            make = c_make_encoder({}, _default, escape, None, ":", ",", False, False, False)
        except TypeError:  # another interpreter's private signature: encode without reuse
            return json.dumps(body, **_OPTIONS, default=_default).encode()  # type: ignore[arg-type]
        chunks = make(body, 0)
        # Only what this body used is kept: a dropped reply is not held past one request.
        self._escaped = used
        rest = "".join(chunks).split(_MARK)
        pieces = [rest[0].encode()]
        for text, after in zip(long, rest[1:], strict=True):
            pieces += (text, after.encode())
        return b"".join(pieces)


_OPTIONS = {"ensure_ascii": False, "separators": (",", ":"), "allow_nan": False}


def _default(value: object) -> object:
    """Containers that are not dicts or lists, as the SDKs' own encoders take them."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Iterable) and not isinstance(value, str | bytes):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


#: One for every provider: the strings of a conversation are the same whichever API
#: carries them, and requests are encoded one at a time on the event loop.
_ENCODER = BodyEncoder()


def encode_body(body: Mapping[str, Any]) -> bytes:
    return _ENCODER.encode(body)
