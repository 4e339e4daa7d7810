"""Untrusted text made visible before it is shown to decide on: no control character,
escape sequence or bidi override reaches the terminal, each is spelled out instead.

Small on purpose: the trust question and the terminal approval prompt use it. (A general
sanitiser for everything picode shows may take its place.)
"""

from __future__ import annotations

import unicodedata

#: Bidi embeddings, overrides and isolates: they reorder what is shown.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


def visible(text: str, *, keep_newlines: bool = True) -> str:
    """``text`` with every control, escape and bidi character spelled out (``␛``, ``\\r``,
    ``U+202E``); newlines kept unless ``keep_newlines`` is off."""
    out: list[str] = []
    for char in text:
        if char == "\n" and keep_newlines:
            out.append(char)
        elif char == "\x1b":
            out.append("␛")
        elif char in "\r\n\t":
            out.append({"\r": "\\r", "\n": "\\n", "\t": "\\t"}[char])
        elif char in _BIDI or unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp"):
            out.append(f"U+{ord(char):04X}")
        else:
            out.append(char)
    return "".join(out)


def one_line(text: str, limit: int = 200) -> str:
    """``visible`` on one line, cut to ``limit`` characters with an ellipsis."""
    shown = visible(text, keep_newlines=False)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"
