"""``/fork``: pick one of your earlier messages to start a new session from."""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content

from picode.ai.untrusted import one_line
from picode.tui.pickers.base import DEFAULT_MAX_ROWS, PickerScreen

_TEXT_CHARS = 300

ForkEntry = tuple[str, str]
"""(entry_id, text) as ``AgentSession.user_messages_for_fork()`` returns them."""


class ForkPicker(PickerScreen[ForkEntry, str]):
    """Dismisses with the chosen entry id, or None. Newest first, numbered in order."""

    title_text = "Fork from an earlier message"
    hint_text = "↑↓ move · enter fork from here · esc cancel · type to filter"
    placeholder = "Filter your messages…"
    empty_text = "No message matches"

    def __init__(self, entries: Sequence[ForkEntry], *, max_rows: int = DEFAULT_MAX_ROWS) -> None:
        super().__init__(max_rows=max_rows)
        self.entries = list(reversed(entries))
        self._lowered = {entry_id: text.lower() for entry_id, text in self.entries}
        self._numbers = {entry_id: n for n, (entry_id, _) in enumerate(entries, 1)}
        self._number_width = len(str(len(self.entries)))
        if not self.entries:
            self.empty_text = "No messages to fork from yet"

    def before_first_filter(self) -> None:
        self.pick_list.empty_text = self.empty_text

    def filter_items(self, query: str) -> Sequence[ForkEntry]:
        words = query.lower().split()
        if not words:
            return self.entries
        return [e for e in self.entries if all(w in self._lowered[e[0]] for w in words)]

    def render_item(self, item: ForkEntry, highlighted: bool) -> Content:
        entry_id, text = item
        shown = one_line(" ".join(text.split()), _TEXT_CHARS) or "(empty message)"
        number = str(self._numbers[entry_id]).rjust(self._number_width)
        return Content.assemble((f"{number}  ", "$text-muted"), shown)

    def result_for(self, item: ForkEntry) -> str:
        return item[0]
