"""Sessions on disk: files, the index, listing and resuming (docs/sessions.md).

The face of ``picode.session.store``: front ends import from here, never from its modules.
Each name is imported on first use, so the face costs nothing on the way to the first frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from picode.session._faces import lazy_names

if TYPE_CHECKING:
    from picode.session.store.draft import RECOVERED_TEXT
    from picode.session.store.format import (
        FORMAT_VERSION,
        now_ms,
        read_shell_run,
        redact_secrets,
        shell_run_text,
        typed_text,
    )
    from picode.session.store.index import SessionSummary
    from picode.session.store.recorder import SessionRecorder
    from picode.session.store.sessions import (
        AmbiguousSessionError,
        NewSessionFile,
        SessionNotFoundError,
        SessionStore,
    )
    from picode.session.store.tree import TreeNode

_WHERE = {
    "RECOVERED_TEXT": "draft",
    "AmbiguousSessionError": "sessions",
    "FORMAT_VERSION": "format",
    "NewSessionFile": "sessions",
    "SessionNotFoundError": "sessions",
    "SessionRecorder": "recorder",
    "SessionStore": "sessions",
    "SessionSummary": "index",
    "TreeNode": "tree",
    "now_ms": "format",
    "read_shell_run": "format",
    "redact_secrets": "format",
    "shell_run_text": "format",
    "typed_text": "format",
}

__all__ = [
    "FORMAT_VERSION",
    "RECOVERED_TEXT",
    "AmbiguousSessionError",
    "NewSessionFile",
    "SessionNotFoundError",
    "SessionRecorder",
    "SessionStore",
    "SessionSummary",
    "TreeNode",
    "now_ms",
    "read_shell_run",
    "redact_secrets",
    "shell_run_text",
    "typed_text",
]

__getattr__ = lazy_names(__name__, _WHERE)
