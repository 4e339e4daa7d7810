"""The conversation's finished messages: one object, shared by everyone who reads them.

The loop appends each message just before its ``MessageEnd`` reaches any listener; the
session replaces or truncates it between runs (recovery, compaction, switching sessions).
Everything else reads it: there is no second copy to keep in step.
"""

from __future__ import annotations

from collections.abc import Iterable

from picode.ai.types import Message


class MessageLog(list[Message]):
    """A list, so every reader can index, slice and iterate it as one; changed only through
    ``append``/``replace``/``truncate``, always in place, so a reference never goes stale."""

    __slots__ = ()

    def replace(self, messages: Iterable[Message]) -> None:
        self[:] = list(messages)

    def truncate(self, length: int) -> None:
        del self[length:]

    def since(self, mark: int) -> list[Message]:
        """The messages appended after ``len()`` was ``mark``."""
        return self[mark:]
