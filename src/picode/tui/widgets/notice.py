"""Light transcript entries needed before any session exists: the welcome line, notices.

Kept apart from ``messages`` so the first frame does not pay for Markdown and the agent's
types.
"""

from __future__ import annotations

from typing import Literal

from textual.content import Content
from textual.widgets import Static

from picode.ai.untrusted import one_line, safe

NoticeLevel = Literal["info", "warning", "error", "interrupted"]
_NOTICE_STYLE: dict[str, str] = {
    "info": "$muted",
    "warning": "$warning",
    "error": "$tool-error",
    "interrupted": "$warning bold",
}


class NoticeView(Static):
    DEFAULT_CSS = """
    NoticeView {
        height: auto;
        margin: 0 0 1 0;
    }
    """

    def __init__(self, text: str, level: NoticeLevel = "info") -> None:
        self.level = level
        self.text = text
        # Notices quote errors, file names, server replies: untrusted.
        super().__init__(Content.styled(safe(text), _NOTICE_STYLE[level]), classes=f"-{level}")

    def set_text(self, text: str, level: NoticeLevel) -> None:
        """Change the line in place (a retry sequence's line as it goes on)."""
        self.remove_class(f"-{self.level}")
        self.level, self.text = level, text
        self.add_class(f"-{level}")
        self.update(Content.styled(safe(text), _NOTICE_STYLE[level]))


_HINTS = (
    "enter send",
    "shift+enter newline",
    "alt+enter follow-up",
    "esc interrupt",
    "shift+tab thinking",
    "ctrl+p model",
    "ctrl+t thinking blocks",
    "ctrl+o expand",
    "ctrl+c clear / interrupt, twice quit",
)
#: A narrow terminal wraps between hints, never inside one (no-break spaces within each).
KEY_HINTS = " · ".join(hint.replace(" ", "\u00a0") for hint in _HINTS)


class WelcomeView(Static):
    DEFAULT_CSS = """
    WelcomeView {
        height: auto;
        margin: 0 0 1 0;
        color: $muted;
    }
    """

    def __init__(self, version: str, model: str, cwd: str) -> None:
        super().__init__(
            Content.assemble(
                ("picode", "bold $primary"),
                (f" {version}", "$muted"),
                "  ·  ",
                (model, "$foreground"),
                "  ·  ",
                (one_line(cwd), "$foreground"),
                "\n",
                (KEY_HINTS, "$muted"),
            )
        )
