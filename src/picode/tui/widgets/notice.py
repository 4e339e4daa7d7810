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


KEY_HINTS = (
    "enter send",
    "shift+enter newline",
    "alt+enter follow-up",
    "esc interrupt",
    "shift+tab mode",
    "alt+t thinking level",
    "ctrl+p next model",
    "ctrl+t fold thinking",
    "ctrl+o expand",
    "ctrl+c clear / interrupt, twice quit",
)


def hint_lines(hints: tuple[str, ...], width: int) -> list[str]:
    """The hints joined by " · ", broken into lines between hints, never inside one (a hint
    wider than the line gets a line of its own)."""
    lines: list[str] = []
    current = ""
    for hint in hints:
        joined = f"{current} · {hint}" if current else hint
        # Room for the " ·" a line ends with when more hints follow it.
        if current and len(joined) + 2 > width:
            lines.append(current + " ·")
            current = hint
        else:
            current = joined
    if current:
        lines.append(current)
    return lines


class WelcomeView(Static):
    DEFAULT_CSS = """
    WelcomeView {
        height: auto;
        margin: 0 0 1 0;
        color: $muted;
    }
    """

    def __init__(self, version: str, model: str, cwd: str) -> None:
        self._head = Content.assemble(
            ("picode", "bold $primary"),
            (f" {version}", "$muted"),
            "  ·  ",
            (model, "$foreground"),
            "  ·  ",
            (one_line(cwd), "$foreground"),
        )
        super().__init__(self._with_hints(80))

    def _with_hints(self, width: int) -> Content:
        hints = "\n".join(hint_lines(KEY_HINTS, max(20, width)))
        return Content.assemble(self._head, "\n", (hints, "$muted"))

    def on_resize(self) -> None:
        # Wrapped here, between hints: the renderer would break inside one.
        self.update(self._with_hints(self.content_size.width))
