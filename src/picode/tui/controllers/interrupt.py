"""The Esc chain: close the topmost popup, else stop everything in flight, else (pressed
twice on an empty editor) open /rewind.

Esc must always work, so this asks as little as possible of the session: ``abort()`` never
raises, and queued messages are taken back first so nothing typed is lost.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

#: Two presses of Esc within this many seconds, on an empty editor, open /rewind.
DOUBLE_ESC_S = 1.0
REWIND_HINT = "Press esc again to rewind"


if TYPE_CHECKING:
    # Only for the type checker: a Protocol class costs instructions to create, on
    # the way to the first frame.
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
        @property
        def is_empty(self) -> bool: ...

        def insert_before(self, texts: list[str]) -> None: ...

    class Hints(Protocol):
        @property
        def notice(self) -> tuple[str, str] | None: ...

        def set_notice(self, text: str | None) -> None: ...

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

        @property
        def status(self) -> Hints: ...

        def open_rewind(self) -> None:
            """Esc Esc on an empty editor with nothing running: the /rewind picker."""
            ...

        def set_timer(self, delay: float, callback: Callable[[], None]) -> object: ...


class InterruptController:
    def __init__(self, host: InterruptHost, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._host = host
        self._clock = clock
        self._first_esc: float | None = None

    def is_busy(self) -> bool:
        session = self._host.session
        return session is not None and (session.is_running or session.retry_pending)

    def can_handle(self) -> bool:
        """Whether Esc has anything to do now (otherwise the key passes through)."""
        popups = any(popup.is_open() for popup in self._host.popups())
        return popups or self.is_busy() or self._may_rewind()

    def handle(self) -> bool:
        for popup in reversed(self._host.popups()):
            if popup.is_open() and popup.close():
                self._first_esc = None
                return True
        if self.abort_run():
            self._first_esc = None
            return True
        return self._toward_rewind()

    def _may_rewind(self) -> bool:
        return self._host.session is not None and self._host.editor.is_empty

    def _toward_rewind(self) -> bool:
        """The first Esc says what a second one does; the second opens /rewind."""
        if not self._may_rewind():
            return False
        now, first = self._clock(), self._first_esc
        if first is not None and now - first <= DOUBLE_ESC_S:
            self._first_esc = None
            self._host.status.set_notice(None)
            self._host.open_rewind()
        else:
            self._first_esc = now
            self._host.status.set_notice(REWIND_HINT)
            self._host.set_timer(DOUBLE_ESC_S, self._forget_hint)
        return True

    def _forget_hint(self) -> None:
        notice = self._host.status.notice
        if notice is not None and notice[0] == REWIND_HINT:
            self._host.status.set_notice(None)

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
