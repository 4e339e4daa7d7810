"""What a session has used: tokens and cost, summed over its assistant messages and the
requests it made of its own (compaction summaries)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

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

    def merge(self, other: SessionUsage) -> None:
        self.input += other.input
        self.output += other.output
        self.cache_read += other.cache_read
        self.cache_write += other.cache_write
        self.cost += other.cost

    def as_record(self) -> dict[str, Any]:
        """The running total, as a compaction entry keeps it (so a resumed session's spend
        still counts what the summary replaced)."""
        return asdict(self)

    @classmethod
    def from_record(cls, record: object) -> SessionUsage | None:
        if not isinstance(record, dict):
            return None
        try:
            return cls(
                input=int(record["input"]),
                output=int(record["output"]),
                cache_read=int(record["cache_read"]),
                cache_write=int(record["cache_write"]),
                cost=float(record["cost"]),
            )
        except (KeyError, TypeError, ValueError):
            return None
