"""The exact values of the keys picode knows, so nothing it writes can carry them.

Masking itself is ``picode.ai.redaction`` (one pattern for every stream and file): the
session remembers every key it reads there.
"""

from __future__ import annotations

from picode.ai.redaction import (
    MIN_SECRET_CHARS,
    REDACTED,
    known_secrets,
    mask_known,
    remember_secret,
)

__all__ = ["MIN_SECRET_CHARS", "REDACTED", "known_secrets", "mask_known", "remember_secret"]
