"""Leaving picode: Ctrl+C's ladder (copy, clear, interrupt, then quit on a second press
within a second) and the shutdown that lets the session save before the app exits."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from picode.session.agent_session import AgentSession

log = logging.getLogger(__name__)

DOUBLE_PRESS_S = 1.0
CLOSE_TIMEOUT_S = 10.0


if TYPE_CHECKING:
    # Only for the type checker: a Protocol class costs instructions to create, on
    # the way to the first frame.
    class Clearable(Protocol):
        @property
        def is_empty(self) -> bool: ...

        def reset(self) -> None: ...

    class Notices(Protocol):
        """The status line's one-line notice."""

        @property
        def notice(self) -> tuple[str, str] | None: ...

        def set_notice(self, text: str | None) -> None: ...

    class Interrupts(Protocol):
        def is_busy(self) -> bool: ...

        def abort_run(self) -> bool: ...

    class QuitHost(Protocol):
        """What Ctrl+C and quitting act on."""

        @property
        def editor(self) -> Clearable: ...

        @property
        def interrupts(self) -> Interrupts: ...

        @property
        def status(self) -> Notices: ...

        def set_timer(self, delay: float, callback: Callable[[], None]) -> object: ...

        def selected_text(self) -> str: ...

        def action_copy_selection(self) -> None: ...

        def quit_soon(self) -> None:
            """Quit from a worker: the key's handler returns at once."""
            ...


class QuitController:
    """Ctrl+C and quitting; what it acts on is the host, never the app itself."""

    def __init__(self, host: QuitHost, *, clock: Callable[[], float]) -> None:
        self._host = host
        self._clock = clock
        self._last_press: float | None = None
        self._shutting_down = False

    def clear_or_quit(self) -> None:
        """Copy a selection; else clear the editor; else interrupt a run; twice: quit.

        Text in the editor is only ever cleared, even within the double press: what was
        typed after the first press must not be lost to a quit."""
        host = self._host
        if host.selected_text():
            host.action_copy_selection()
            return
        now = self._clock()
        editor = host.editor
        if not editor.is_empty:
            editor.reset()
            if host.interrupts.is_busy():
                # The next press interrupts the run rather than quitting.
                self._last_press = None
                return
            self._arm(now, "Press ctrl+c again to quit")
            return
        if self._last_press is not None and now - self._last_press <= DOUBLE_PRESS_S:
            self._last_press = None
            host.quit_soon()
            return
        if host.interrupts.abort_run():
            self._arm(now, "Interrupted · press ctrl+c again to quit")
            return
        self._arm(now, "Press ctrl+c again to quit")

    def _arm(self, now: float, notice: str) -> None:
        self._last_press = now
        self._host.status.set_notice(notice)
        self._host.set_timer(DOUBLE_PRESS_S, self._forget)

    def _forget(self) -> None:
        status = self._host.status
        notice = status.notice
        if notice is not None and "press ctrl+c" in notice[0].lower():
            status.set_notice(None)

    def begin_shutdown(self) -> bool:
        """True the first time: quitting is asked for by several keys and commands."""
        if self._shutting_down:
            return False
        self._shutting_down = True
        return True

    async def close_session(self, session: AgentSession | None) -> str | None:
        """Abort what runs and let the session save; the hint for resuming it, if any."""
        if session is None:
            return None
        if session.is_running:
            self._host.status.set_notice("Stopping and saving…")
        try:
            await asyncio.wait_for(session.close(), CLOSE_TIMEOUT_S)
        except Exception:
            log.warning("closing the session failed", exc_info=True)
        return resume_hint(session)


def resume_hint(session: AgentSession) -> str | None:
    """How to come back to ``session`` from the shell, when anything of it was saved."""
    path = session.session_file_path
    if not session.persistent or path is None or not path.exists() or not session.messages:
        return None
    if not path.is_relative_to(session.sessions_dir):
        # A file the person named (--session PATH): -c and -r search the store, not there.
        import shlex  # only for a session saved outside the sessions folder

        return f"Resume this session with: picode --session {shlex.quote(str(path))}"
    return f"Resume this session with: picode -c  (or picode -r {session.session_id})"
