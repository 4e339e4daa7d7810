"""Helpers for the whole-app tests: a tool that runs until the test releases it."""

from __future__ import annotations

import asyncio
from typing import Any

from picode.agent.tool import ToolResult
from picode.ai.abort import AbortSignal


class FakeSlowTool:
    """A tool that runs until released or aborted, and records whether its signal fired."""

    label = "Slow"
    description = "Waits until the test releases it."

    def __init__(self, name: str = "slow") -> None:
        self.name = name
        self.started = False
        self.signal_fired = False
        self.release: asyncio.Event | None = None

    @property
    def parameters(self) -> dict[str, Any]:
        return {"type": "object", "properties": {}}

    def validate(self, arguments: dict[str, Any]) -> Any:
        return arguments

    async def execute(
        self, call_id: str, args: Any, signal: AbortSignal, on_update: Any
    ) -> ToolResult:
        self.release = asyncio.Event()
        signal.add_callback(lambda _reason: setattr(self, "signal_fired", True))
        self.started = True
        on_update(ToolResult.text(f"{self.name} is working"))
        released = asyncio.ensure_future(self.release.wait())
        aborted = asyncio.ensure_future(signal.wait())
        try:
            await asyncio.wait({released, aborted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            released.cancel()
            aborted.cancel()
        return ToolResult.text(f"{self.name} finished")
