"""``/theme``: the highlighted theme is applied live; Esc puts the original back."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual.content import Content

from picode.tui.completion.fuzzy import rank
from picode.tui.pickers.base import DEFAULT_MAX_ROWS, PickerScreen


class ThemePicker(PickerScreen[str, str]):
    """Calls ``on_preview(name)`` as the highlight moves; dismisses with the chosen name
    (already previewed, so the app only has to remember it) or None after restoring
    ``current`` through ``on_preview``."""

    title_text = "Select a theme"
    hint_text = "↑↓ preview · enter keep · esc restore · type to filter"
    placeholder = "Filter themes…"
    empty_text = "No theme matches"

    def __init__(
        self,
        theme_names: Sequence[str],
        current: str,
        on_preview: Callable[[str], None],
        *,
        max_rows: int = DEFAULT_MAX_ROWS,
    ) -> None:
        super().__init__(max_rows=max_rows)
        self.theme_names = list(theme_names)
        self.original = current
        self.on_preview = on_preview
        self.previewed = current

    def filter_items(self, query: str) -> Sequence[str]:
        return rank(query, self.theme_names, key=str)

    def initial_cursor(self, matches: Sequence[str]) -> int:
        return matches.index(self.original) if self.original in matches else 0

    def item_highlighted(self, item: str) -> None:
        if item != self.previewed:
            self.previewed = item
            self.on_preview(item)

    def render_item(self, item: str, highlighted: bool) -> Content:
        if item == self.original:
            return Content.assemble(
                ("● ", "$success"), (item, "bold"), ("  (current)", "$text-muted")
            )
        return Content.assemble("  ", item)

    def result_for(self, item: str) -> str:
        if item != self.previewed:
            self.previewed = item
            self.on_preview(item)
        return item

    def action_cancel(self) -> None:
        if self.previewed != self.original:
            self.previewed = self.original
            self.on_preview(self.original)
        self.dismiss(None)
