"""The Esc chain: close the topmost popup, else stop everything in flight, else nothing.

Esc must always work, so this asks as little as possible of the session: ``abort()`` never
raises, and queued messages are taken back first so nothing typed is lost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class Interruptible(Protocol):
    @property
    def is_running(self) -> bool: ...

    @property
    def retry_pending(self) -> bool: ...

    def clear_queues(self) -> list[str]: ...

    def abort(self) -> None: ...


#: Closes a popup when one is open and says whether it did.
PopupCloser = Callable[[], bool]


class InterruptController:
    def __init__(
        self,
        *,
        session: Callable[[], Interruptible | None],
        restore_to_editor: Callable[[list[str]], None],
        on_abort: Callable[[], None],
    ) -> None:
        self._session = session
        self._restore = restore_to_editor
        self._on_abort = on_abort
        self._popups: list[tuple[Callable[[], bool], PopupCloser]] = []

    def add_popup(self, is_open: Callable[[], bool], close: PopupCloser) -> None:
        """Register something Esc should close before it interrupts (completion menus...)."""
        self._popups.append((is_open, close))

    def is_busy(self) -> bool:
        session = self._session()
        return session is not None and (session.is_running or session.retry_pending)

    def can_handle(self) -> bool:
        """Whether Esc has anything to do now (otherwise the key passes through)."""
        return any(is_open() for is_open, _ in self._popups) or self.is_busy()

    def handle(self) -> bool:
        for is_open, close in reversed(self._popups):
            if is_open() and close():
                return True
        return self.abort_run()

    def abort_run(self) -> bool:
        """Stop the run, its tools and any pending retry; False when nothing was running."""
        session = self._session()
        if session is None or not (session.is_running or session.retry_pending):
            return False
        # Take the queue back before aborting, so the winding-down run delivers none of it.
        queued = session.clear_queues()
        session.abort()
        self._on_abort()
        if queued:
            self._restore(queued)
        return True
