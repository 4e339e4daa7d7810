"""The session's file as front ends read it: which one is open, its name, its messages.

A part of ``AgentSession`` (it inherits this), kept beside the store it reads."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from picode.session.events import AnySessionEvent, SessionNameChanged

if TYPE_CHECKING:
    from picode.ai.types import Message
    from picode.session.store.recorder import SessionRecorder
    from picode.session.store.sessions import SessionStore


class StoredConversation:
    _recorder: SessionRecorder

    def _emit_soon(self, event: AnySessionEvent) -> None:
        raise NotImplementedError

    @property
    def session_id(self) -> str | None:
        return self._recorder.session_id

    @property
    def session_file_path(self) -> Path | None:
        return self._recorder.path

    @property
    def session_name(self) -> str | None:
        return self._recorder.name

    def set_session_name(self, name: str) -> None:
        self._recorder.set_name(name)
        self._emit_soon(SessionNameChanged(name))

    @property
    def persistent(self) -> bool:
        """False with ``--no-session``: nothing is written to disk."""
        return self._recorder.persistent

    @property
    def store(self) -> SessionStore:
        """The saved sessions (for a picker)."""
        return self._recorder.store

    def session_header(self) -> dict[str, Any] | None:
        """The session file's header line (the file is created if need be); None when not
        saved."""
        file = self._recorder.ensure_file()
        return None if file is None else {**file.header, "path": str(file.path)}

    def display_messages(self) -> list[Message]:
        """Everything on the branch, compacted parts included (what a transcript shows)."""
        return self._recorder.display_messages()

    @property
    def display_count(self) -> int:
        return self._recorder.display_count

    def display_range(self, start: int, stop: int) -> list[Message]:
        """Messages ``start:stop`` of the branch, parsing only those."""
        return self._recorder.display_range(start, stop)

    def user_messages_for_fork(self) -> list[tuple[str, str]]:
        """(entry id, text) of each of the person's messages, for /fork."""
        return self._recorder.user_entries()
