"""What a session's current branch means to the model and to a UI."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from picode.ai.types import Message
from picode.session.usage import SessionUsage

_ITER_BATCH = 256


class MessageSource(Protocol):
    def load_messages(self, entry_ids: list[str]) -> list[tuple[str, Message]]: ...


class BranchMessages:
    """Every message on the branch, root first, parsed only when asked for.

    A UI renders ``tail(n)`` first and pulls older ones with ``range``; lines that turn out
    unreadable are skipped (and reported in the session file's warnings).
    """

    __slots__ = ("_source", "entry_ids")

    def __init__(self, source: MessageSource, entry_ids: list[str]) -> None:
        self._source = source
        self.entry_ids = entry_ids

    def __len__(self) -> int:
        return len(self.entry_ids)

    def tail(self, n: int) -> list[Message]:
        if n <= 0:
            return []
        return self.range(max(0, len(self.entry_ids) - n), len(self.entry_ids))

    def range(self, start: int, stop: int) -> list[Message]:
        """Messages ``entry_ids[start:stop]``."""
        return [message for _, message in self._source.load_messages(self.entry_ids[start:stop])]

    def with_ids(self, start: int = 0, stop: int | None = None) -> list[tuple[str, Message]]:
        return self._source.load_messages(self.entry_ids[start:stop])

    def __iter__(self) -> Iterator[Message]:
        for start in range(0, len(self.entry_ids), _ITER_BATCH):
            yield from self.range(start, start + _ITER_BATCH)


class _NoMessages:
    def load_messages(self, entry_ids: list[str]) -> list[tuple[str, Message]]:
        return []


def _no_display() -> BranchMessages:
    return BranchMessages(_NoMessages(), [])


@dataclass
class SessionContext:
    messages: list[Message]
    """What the model sees: the latest compaction's summary and kept tail, or everything."""
    message_entry_ids: list[str | None]
    """Parallel to ``messages``; None for the synthetic compaction summary."""
    model: tuple[str, str] | None = None
    """``(provider, model_id)`` of the latest model change on the branch."""
    thinking: str | None = None
    fired_rules: list[str] = field(default_factory=list)
    todos: Any = None
    """What the branch's last todo list entry holds (None: no list was ever saved on it)."""
    display_messages: BranchMessages = field(default_factory=_no_display)
    """All message entries on the branch, including those before a compaction (lazy)."""
    spent: SessionUsage = field(default_factory=SessionUsage)
    """Tokens and cost of the whole branch: the latest compaction's running total (what it
    summarised, and the summary's own request) plus every reply since."""

    def tail(self, n: int) -> list[Message]:
        """The last ``n`` messages for display (those before a compaction count too)."""
        return self.display_messages.tail(n)
