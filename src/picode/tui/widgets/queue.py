"""Messages typed while the agent works, shown above the editor until they are delivered."""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.widgets import Static

from picode.ai.untrusted import safe

PREVIEW_CHARS = 120


class QueueView(Static):
    DEFAULT_CSS = """
    QueueView {
        height: auto;
        max-height: 8;
        padding: 0 1;
        color: $muted;
    }
    """

    def __init__(self) -> None:
        super().__init__("", id="queue")
        self.steering: list[str] = []
        self.follow_ups: list[str] = []
        self.display = False

    def show(self, steering: Sequence[str], follow_ups: Sequence[str]) -> None:
        self.steering = list(steering)
        self.follow_ups = list(follow_ups)
        self.display = bool(self.steering or self.follow_ups)
        lines = [_line("steer", text) for text in self.steering]
        lines += [_line("follow-up", text) for text in self.follow_ups]
        if lines:
            lines.append(Content.styled("alt+↑ to edit queued messages", "$muted italic"))
        self.update(Content("\n").join(lines))


def _line(kind: str, text: str) -> Content:
    first, _, rest = safe(text).strip().partition("\n")
    if rest or len(first) > PREVIEW_CHARS:
        first = first[: PREVIEW_CHARS - 1] + "…"
    return Content.assemble(("⏵ ", "$accent"), (f"{kind}: ", "$accent"), (first, "$foreground"))
