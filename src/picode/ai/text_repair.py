"""Text that cannot be UTF-8 repaired at the edge: U+FFFD instead of lone surrogates.

Python smuggles undecodable bytes of argv, file names and environment values through ``str``
as lone surrogates (``surrogateescape``). They cannot be encoded as UTF-8, so one of them in
a prompt or a tool result would make every request and every session write fail.
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def repair_text(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (unchanged when there is none)."""
    if text.isascii():
        return text
    return _LONE_SURROGATE.sub(REPLACEMENT, text)


def repair_os_text(text: str) -> str:
    """An argument or name decoded with ``surrogateescape``: its original bytes decoded with
    replacement, so a broken multi-byte sequence becomes one U+FFFD per invalid byte."""
    if text.isascii():
        return text
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # surrogates that did not come from bytes
        return repair_text(text)
    return raw.decode("utf-8", "replace")


def repair_tree(value: Any) -> Any:
    """A JSON-like tree with every string repaired (dict keys too); shared parts are copied."""
    if isinstance(value, str):
        return repair_text(value)
    if isinstance(value, dict):
        return {
            repair_text(k) if isinstance(k, str) else k: repair_tree(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [repair_tree(item) for item in value]
    return value


def has_surrogates(text: str) -> bool:
    return not text.isascii() and _LONE_SURROGATE.search(text) is not None
