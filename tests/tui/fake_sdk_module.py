"""Stands in for a provider SDK module in the start-up tests (importing it is the point)."""

from __future__ import annotations

import threading
from typing import Any

IMPORTED = True
#: Models whose client was prepared through this module (``picode.ai.stream.prepare_provider``).
PREPARED: list[str] = []
#: Holds ``tests.tui.slow_provider_module``'s import until a test sets it.
GATE = threading.Event()


async def prepare(model: Any, options: Any) -> None:
    PREPARED.append(model.ref)
