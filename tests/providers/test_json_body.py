"""Request bodies encoded by picode (``_json_body``): the JSON the SDKs would send, and the
long strings of the previous body not escaped again."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from picode.ai.providers._json_body import MIN_CACHED, BodyEncoder

LONG = 'A reply with "quotes", a tab\t, a newline\n, é, 🙂 and \u2028. ' * 40


def _sdk_json(body: Any) -> bytes:
    """How the SDKs encode a body: compact, UTF-8, no ASCII escaping."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def test_bodies_are_the_json_the_sdks_send() -> None:
    body = {
        "model": "m",
        "max_tokens": 10,
        "temperature": 0.25,
        "stream": True,
        "metadata": None,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": LONG}]},
            {"role": "assistant", "content": [{"type": "tool_use", "input": {"n": [1, 2.5]}}]},
            {"role": "user", "content": "control \x00\x1f and \\ backslash"},
        ],
        "stop": ("a", "b"),
    }
    encoded = BodyEncoder().encode(body)

    assert encoded == _sdk_json(body)
    assert json.loads(encoded)["messages"][0]["content"][0]["text"] == LONG


def test_a_value_json_cannot_hold_is_refused() -> None:
    with pytest.raises(ValueError):
        BodyEncoder().encode({"temperature": math.nan})
    with pytest.raises(TypeError):
        BodyEncoder().encode({"x": object()})


def test_long_strings_of_the_previous_body_are_not_escaped_again() -> None:
    encoder = BodyEncoder()
    history = [f"{LONG} reply {n}" for n in range(3)]
    encoder.encode({"messages": history})
    assert encoder.escapes == 3

    grown = [*history, f"{LONG} reply 3"]
    assert encoder.encode({"messages": grown}) == _sdk_json({"messages": grown})
    assert encoder.escapes == 4  # only the new reply

    # Equal text in another string object (a reloaded or rebuilt message) is found too.
    copies = ["".join(list(text)) for text in grown]
    assert copies[0] is not grown[0]
    assert encoder.encode({"messages": copies}) == _sdk_json({"messages": copies})
    assert encoder.escapes == 4

    short = "x" * (MIN_CACHED - 1)
    encoder.encode({"messages": [short]})
    encoder.encode({"messages": [short]})
    assert encoder.escapes == 4  # short strings are never kept


def test_only_the_last_body_s_strings_are_kept() -> None:
    encoder = BodyEncoder()
    dropped = f"{LONG} compacted away"
    encoder.encode({"messages": [dropped, LONG]})
    encoder.encode({"messages": [LONG]})  # after a compaction, say
    assert encoder.escapes == 2

    encoder.encode({"messages": [dropped, LONG]})
    assert encoder.escapes == 3  # it was let go, so it is escaped again
