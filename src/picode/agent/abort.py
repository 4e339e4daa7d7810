"""Cancellation for the agent layer (SPEC §4).

The implementation lives in ``picode.ai.abort`` so providers can use it without importing
the agent; this module is the agent-level name for the same objects.
"""

from __future__ import annotations

from picode.ai.abort import AbortController, AbortError, AbortSignal, Unsubscribe

__all__ = ["AbortController", "AbortError", "AbortSignal", "Unsubscribe"]
