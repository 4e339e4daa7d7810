"""A titled block of plain lines in the transcript: ``/session``, ``/hotkeys``, ``!cmd`` notes."""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.widgets import Static

from picode.ai.untrusted import safe


class InfoView(Static):
    DEFAULT_CSS = """
    InfoView {
        height: auto;
        margin: 0 0 1 0;
        padding: 0 1;
        border-left: outer $primary 60%;
        color: $foreground;
    }
    """

    def __init__(self, title: str, lines: Sequence[str | tuple[str, str]]) -> None:
        self.title_text = title
        self.lines = list(lines)
        super().__init__(_content(title, self.lines))

    @property
    def plain(self) -> str:
        return _content(self.title_text, self.lines).plain


def _content(title: str, lines: Sequence[str | tuple[str, str]]) -> Content:
    """``(label, value)`` pairs are aligned in two columns; strings are shown as they are."""
    width = max((len(line[0]) for line in lines if isinstance(line, tuple)), default=0)
    rows = [Content.styled(title, "bold $primary")]
    for line in lines:
        if isinstance(line, tuple):
            label, value = line
            # Values quote session files and MCP servers' errors: untrusted.
            rows.append(Content.assemble((label.ljust(width), "$muted"), "  ", safe(value)))
        else:
            rows.append(Content(safe(line)))
    return Content("\n").join(rows)
