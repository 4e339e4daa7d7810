"""A few labelled choices under a title that says what they act on (/rewind, /tree)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from textual.content import Content

from picode.tui.pickers.base import DEFAULT_MAX_ROWS, PickerScreen


class Labelled(Protocol):
    @property
    def label(self) -> str: ...


C = TypeVar("C", bound=Labelled)


class ChoicePicker(PickerScreen[C, C]):
    """Dismisses with the chosen item, or None. ``title`` may hold several lines (already
    made safe for a terminal by the caller)."""

    hint_text = "↑↓ move · enter choose · esc cancel"
    placeholder = "Filter…"

    def __init__(
        self, title: str, choices: Sequence[C], *, hint: str | None = None,
        max_rows: int = DEFAULT_MAX_ROWS,
    ) -> None:  # fmt: skip
        super().__init__(max_rows=max_rows)
        self.choices = list(choices)
        self.title_text = title
        self.title_label.update(title)
        if hint is not None:
            self.hint_text = hint
            self.hint_label.update(hint)

    def filter_items(self, query: str) -> Sequence[C]:
        words = query.lower().split()
        return [c for c in self.choices if all(w in c.label.lower() for w in words)]

    def render_item(self, item: C, highlighted: bool) -> Content:
        return Content(item.label)

    def result_for(self, item: C) -> C:
        return item
