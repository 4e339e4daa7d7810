"""Stands in for a provider SDK module in the start-up tests (importing it is the point)."""

from __future__ import annotations

from typing import Any

IMPORTED = True
#: Models whose client was prepared through this module (``picode.ai.stream.prepare_provider``).
PREPARED: list[str] = []


async def prepare(model: Any, options: Any) -> None:
    PREPARED.append(model.ref)
