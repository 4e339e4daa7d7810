"""Alt+Enter for terminals without the kitty keyboard protocol.

Most terminals (and tmux) send Alt+Enter as ESC CR. Textual's parser maps CR to "enter" and
drops the Alt, so queuing a follow-up would steer instead. Teaching its sequence table the
two-byte form restores "alt+enter"; a plain CR is unaffected.
"""

from __future__ import annotations

ALT_ENTER_SEQUENCE = "\x1b\r"


class _AltEnter:
    """Stands in for a ``Keys`` member: the parser reads only ``.value``."""

    value = "alt+enter"


def enable_alt_enter() -> None:
    from typing import Any

    from textual._ansi_sequences import ANSI_SEQUENCES_KEYS

    table: Any = ANSI_SEQUENCES_KEYS  # typed read-only, but a plain dict at run time
    table.setdefault(ALT_ENTER_SEQUENCE, (_AltEnter,))
