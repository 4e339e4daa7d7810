"""``/thinking`` without a level: pick one from a short list."""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content

from picode.tui.pickers.base import DEFAULT_MAX_ROWS, PickerScreen

LEVEL_NOTES: dict[str, str] = {
    "off": "no thinking",
    "minimal": "the least the model allows",
    "low": "a little",
    "medium": "a fair amount",
    "high": "a lot",
    "xhigh": "as much as the model allows",
}


class ThinkingPicker(PickerScreen[str, str]):
    """Dismisses with the chosen level, or None."""

    title_text = "Thinking level"
    hint_text = "↑↓ move · enter select · esc cancel · shift+tab cycles it from the editor"
    placeholder = "Filter levels…"
    empty_text = "No level matches"

    def __init__(
        self, levels: Sequence[str], current: str, *, max_rows: int = DEFAULT_MAX_ROWS
    ) -> None:
        super().__init__(max_rows=max_rows)
        self.levels = list(levels)
        self.current = current

    def filter_items(self, query: str) -> Sequence[str]:
        typed = query.strip().lower()
        return [level for level in self.levels if typed in level]

    def initial_cursor(self, matches: Sequence[str]) -> int:
        return matches.index(self.current) if self.current in matches else 0

    def render_item(self, item: str, highlighted: bool) -> Content:
        mark = ("● ", "$success") if item == self.current else "  "
        return Content.assemble(
            mark,
            (item.ljust(8), "bold" if item == self.current else ""),
            "  ",
            (LEVEL_NOTES.get(item, ""), "$text-muted"),
        )

    def result_for(self, item: str) -> str:
        return item
