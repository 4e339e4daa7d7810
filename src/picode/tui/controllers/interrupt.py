"""The Esc chain: close the topmost popup, else stop everything in flight, else nothing.

Esc must always work, so this asks as little as possible of the session: ``abort()`` never
raises, and queued messages are taken back first so nothing typed is lost.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Interruptible(Protocol):
    @property
    def is_running(self) -> bool: ...

    @property
    def retry_pending(self) -> bool: ...

    def clear_queues(self) -> list[str]: ...

    def abort(self) -> None: ...


class Popup(Protocol):
    """Something Esc closes before it interrupts (a completion list, the search...)."""

    def is_open(self) -> bool: ...

    def close(self) -> bool:
        """Close it when open, and say whether it was."""
        ...


class TakesBack(Protocol):
    def insert_before(self, texts: list[str]) -> None: ...


class InterruptHost(Protocol):
    """What Esc acts on."""

    @property
    def session(self) -> Interruptible | None: ...

    @property
    def editor(self) -> TakesBack:
        """Where queued messages taken back from an interrupted run go."""
        ...

    def popups(self) -> Sequence[Popup]:
        """What is built now, checked last to first (the newest on top)."""
        ...

    def mark_interrupted(self) -> None: ...


class InterruptController:
    def __init__(self, host: InterruptHost) -> None:
        self._host = host

    def is_busy(self) -> bool:
        session = self._host.session
        return session is not None and (session.is_running or session.retry_pending)

    def can_handle(self) -> bool:
        """Whether Esc has anything to do now (otherwise the key passes through)."""
        return any(popup.is_open() for popup in self._host.popups()) or self.is_busy()

    def handle(self) -> bool:
        for popup in reversed(self._host.popups()):
            if popup.is_open() and popup.close():
                return True
        return self.abort_run()

    def abort_run(self) -> bool:
        """Stop the run, its tools and any pending retry; False when nothing was running."""
        host = self._host
        session = host.session
        if session is None or not (session.is_running or session.retry_pending):
            return False
        # Take the queue back before aborting, so the winding-down run delivers none of it.
        queued = session.clear_queues()
        session.abort()
        host.mark_interrupted()
        if queued:
            host.editor.insert_before(queued)
        return True
