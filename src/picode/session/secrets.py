"""The exact values of the keys picode knows, so nothing it writes can carry them.

Key-shaped strings (``sk-…``, ``AIza…``) are masked by pattern; a key that has no such
shape (a local server's token, a key read from auth.json or config ``api_key``) is only
recognisable by its value, so every key picode reads is remembered here for the process.
"""

from __future__ import annotations

#: Shorter values would mask ordinary words.
MIN_SECRET_CHARS = 8

_known: set[str] = set()


def remember_secret(value: str | None) -> None:
    if value and len(value.strip()) >= MIN_SECRET_CHARS:
        _known.add(value.strip())


def known_secrets() -> frozenset[str]:
    return frozenset(_known)


def mask_known(text: str, replacement: str) -> tuple[str, int]:
    """``text`` with every remembered key replaced; and how many were."""
    count = 0
    # Longest first: a key that contains another must go whole.
    for secret in sorted(_known, key=len, reverse=True):
        if secret in text:
            count += text.count(secret)
            text = text.replace(secret, replacement)
    return text, count
