"""What a session has used: tokens and cost, summed over its assistant messages."""

from __future__ import annotations

from dataclasses import dataclass

from picode.ai.types import AssistantMessage


@dataclass(slots=True)
class SessionUsage:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0

    def add(self, message: AssistantMessage) -> None:
        usage = message.usage
        self.input += usage.input
        self.output += usage.output
        self.cache_read += usage.cache_read
        self.cache_write += usage.cache_write
        self.cost += usage.cost.total
