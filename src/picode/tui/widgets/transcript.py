"""The scrolling conversation: bottom-anchored, with old entries unmounted to stay smooth."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

if TYPE_CHECKING:
    from picode.tui.widgets.messages import AssistantMessageView


DEFAULT_MAX_ENTRIES = 150


class Transcript(VerticalScroll, can_focus=False):
    """Keeps at most ``max_entries`` entries mounted; older ones are counted, not drawn."""

    DEFAULT_CSS = """
    Transcript {
        layout: stream;
        height: 1fr;
        padding: 0 1;
        scrollbar-size-vertical: 1;
        background: $background;
    }
    Transcript > #hidden-count {
        color: $muted;
        text-style: italic;
        margin: 0 0 1 0;
    }
    """

    def __init__(self, *, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        super().__init__(id="transcript")
        self.max_entries = max(2, max_entries)
        self.entries: deque[Widget] = deque()
        self.hidden = 0
        self.thinking_collapsed = False
        self.tools_expanded = False
        self._hidden_label = Static("", id="hidden-count")
        self._hidden_label.display = False

    def compose(self) -> ComposeResult:
        yield self._hidden_label

    def on_mount(self) -> None:
        self.anchor()

    def add(self, widget: Widget) -> Widget:
        self.entries.append(widget)
        self.mount(widget)
        self._prune()
        return widget

    def add_all(self, widgets: Iterable[Widget], hidden_before: int = 0) -> None:
        """Entries from history, oldest first; ``hidden_before`` were not even built."""
        batch = list(widgets)
        self.hidden += hidden_before
        if len(batch) > self.max_entries:
            self.hidden += len(batch) - self.max_entries
            batch = batch[-self.max_entries :]
        if batch:
            self.entries.extend(batch)
            self.mount_all(batch)
        self._prune()
        self._show_hidden_count()

    def clear(self) -> None:
        for widget in self.entries:
            widget.remove()
        self.entries.clear()
        self.hidden = 0
        self._show_hidden_count()

    def set_thinking_collapsed(self, collapsed: bool) -> None:
        self.thinking_collapsed = collapsed
        for view in self._assistant_views():
            view.set_thinking_collapsed(collapsed)

    def set_tools_expanded(self, expanded: bool) -> None:
        self.tools_expanded = expanded
        for view in self._assistant_views():
            view.set_tools_expanded(expanded)

    def _assistant_views(self) -> Iterable[AssistantMessageView]:
        # Imported here: the first frame must not wait for Markdown and the agent's types.
        from picode.tui.widgets.messages import AssistantMessageView

        return (w for w in self.entries if isinstance(w, AssistantMessageView))

    def _prune(self) -> None:
        pruned = False
        while len(self.entries) > self.max_entries:
            self.entries.popleft().remove()
            self.hidden += 1
            pruned = True
        if pruned:
            self._show_hidden_count()

    def _show_hidden_count(self) -> None:
        label = self._hidden_label
        label.display = self.hidden > 0
        if self.hidden:
            noun = "message" if self.hidden == 1 else "messages"
            label.update(Content(f"{self.hidden:,} earlier {noun} hidden"))
