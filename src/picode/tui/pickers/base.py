"""What every picker shares: a filter box over a windowed list, Enter picks, Esc cancels.

``PickList`` draws only the rows that fit, so a picker over thousands of items costs
the same to open and to move through as one over ten.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar, Generic, TypeVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Input, Static

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_MAX_ROWS = 15
#: The picker box's maximum height, in percent of the screen (as in its CSS).
BOX_MAX_HEIGHT = 90
CURSOR_STYLE = "$block-cursor-foreground on $block-cursor-background"


class PickList(Widget):
    """Rows ``0..count-1`` drawn by ``render_row(index, highlighted)``, one line each."""

    DEFAULT_CSS = """
    PickList {
        height: auto;
        max-height: 70vh;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    class Highlighted(Message):
        def __init__(self, pick_list: PickList, index: int) -> None:
            super().__init__()
            self.pick_list = pick_list
            self.index = index

    class Chosen(Message):
        def __init__(self, pick_list: PickList, index: int) -> None:
            super().__init__()
            self.pick_list = pick_list
            self.index = index

    def __init__(
        self,
        render_row: Callable[[int, bool], Content],
        *,
        empty_text: str = "Nothing matches",
        max_rows: int = DEFAULT_MAX_ROWS,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self._render_row = render_row
        self.empty_text = empty_text
        self.max_rows = max_rows
        self.count = 0
        self.cursor = 0
        self.top = 0
        #: The rows the picker has room for (set once laid out; None: ``max_rows``).
        self.fitted_rows: int | None = None

    @property
    def room(self) -> int:
        return self.max_rows if self.fitted_rows is None else min(self.max_rows, self.fitted_rows)

    def reset(self, count: int, cursor: int = 0) -> None:
        """New rows (after filtering); announces the highlighted row."""
        resized = min(count, self.room) != min(self.count, self.room)
        self.count = count
        self.top = 0
        self.cursor = -1
        self._set_cursor(cursor, announce=True)
        self.refresh(layout=resized)

    def move(self, delta: int) -> None:
        self._set_cursor(self.cursor + delta)

    def page(self, direction: int) -> None:
        self._set_cursor(self.cursor + direction * max(1, self._visible_rows() - 1))

    def first(self) -> None:
        self._set_cursor(0)

    def last(self) -> None:
        self._set_cursor(self.count - 1)

    def _set_cursor(self, index: int, *, announce: bool = False) -> None:
        if self.count == 0:
            self.cursor = 0
            self.refresh()
            return
        index = max(0, min(index, self.count - 1))
        changed = index != self.cursor
        self.cursor = index
        self._scroll_to_cursor()
        self.refresh()
        if changed or announce:
            self.post_message(self.Highlighted(self, index))

    def _visible_rows(self) -> int:
        return self.size.height or min(self.count, self.room) or 1

    def _scroll_to_cursor(self) -> None:
        visible = self._visible_rows()
        if self.cursor < self.top:
            self.top = self.cursor
        elif self.cursor >= self.top + visible:
            self.top = self.cursor - visible + 1
        self.top = max(0, min(self.top, max(0, self.count - visible)))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return max(1, min(self.count, self.room))

    def on_resize(self) -> None:
        self._scroll_to_cursor()

    def render(self) -> Content:
        if self.count == 0:
            return Content.styled(self.empty_text, "$text-muted italic")
        visible = self._visible_rows()
        width = self.size.width
        rows: list[Content] = []
        for index in range(self.top, min(self.count, self.top + visible)):
            highlighted = index == self.cursor
            row = self._render_row(index, highlighted)
            if highlighted:
                row = row.pad_right(max(0, width - row.cell_length)).stylize_before(CURSOR_STYLE)
            rows.append(row)
        return Content("\n").join(rows)

    def on_click(self, event: events.Click) -> None:
        index = self.top + event.y
        if 0 <= index < self.count:
            self._set_cursor(index)
            self.post_message(self.Chosen(self, index))


class PickerScreen(ModalScreen[R | None], Generic[T, R]):
    """A filter box, the matching items and a hint line; subclasses say what an item is.

    Subclasses implement ``filter_items`` (the items for a query, best first),
    ``render_item`` and ``result_for``; they may override ``initial_cursor``.
    Dismisses with ``result_for(item)`` on Enter and ``None`` on Esc.
    """

    DEFAULT_CSS = """
    PickerScreen {
        align: center middle;
    }
    PickerScreen > #picker {
        width: 90%;
        max-width: 130;
        height: auto;
        max-height: 90%;  /* BOX_MAX_HEIGHT */
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    PickerScreen #picker-title {
        text-style: bold;
        width: 1fr;
    }
    PickerScreen #picker-filter {
        border: none;
        height: 1;
        padding: 0;
        margin: 0 0 1 0;
        background: $surface;
    }
    PickerScreen #picker-filter:focus {
        border: none;
        background-tint: transparent;
    }
    PickerScreen #picker-hint {
        color: $text-muted;
        margin-top: 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", show=False),
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("ctrl+home", "first", "First", show=False),
        Binding("ctrl+end", "last", "Last", show=False),
    ]

    title_text: str = "Pick one"
    hint_text: str = "↑↓ move · enter select · esc cancel · type to filter"
    placeholder: str = "Type to filter…"
    empty_text: str = "Nothing matches"

    def __init__(self, *, max_rows: int = DEFAULT_MAX_ROWS) -> None:
        super().__init__()
        self.matches: Sequence[T] = []
        self.query_text = ""
        self.filter_input = Input(placeholder=self.placeholder, id="picker-filter", compact=True)
        self.pick_list = PickList(
            self._render_row, empty_text=self.empty_text, max_rows=max_rows, id="picker-list"
        )
        self.title_label = Static(self.title_text, id="picker-title", markup=False)
        self.hint_label = Static(self.hint_text, id="picker-hint", markup=False)

    # --- for subclasses ----------------------------------------------------------------

    def filter_items(self, query: str) -> Sequence[T]:
        raise NotImplementedError

    def render_item(self, item: T, highlighted: bool) -> Content:
        raise NotImplementedError

    def result_for(self, item: T) -> R:
        raise NotImplementedError

    def initial_cursor(self, matches: Sequence[T]) -> int:
        return 0

    def item_highlighted(self, item: T) -> None:
        """Called as the highlight moves onto ``item``."""

    def before_first_filter(self) -> None:
        """Called once mounted, before the list is first filled."""

    # --- machinery ---------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield self.title_label
            yield self.filter_input
            yield self.pick_list
            yield self.hint_label

    def on_mount(self) -> None:
        # Subclasses hook in through before_first_filter: Textual calls every class's
        # on_mount in the MRO, so overriding it would run this twice.
        self.before_first_filter()
        self.refilter(initial=True)
        self.filter_input.focus()
        self.call_after_refresh(self._fit_list)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit_list)

    def _fit_list(self) -> None:
        """Give the list only the rows the box has left, so on a short terminal the list
        scrolls and the title, filter and key hints stay inside the box (which Textual
        would otherwise cut at its maximum height, hints first)."""
        box = self.query_one("#picker")
        most = int(self.size.height * BOX_MAX_HEIGHT / 100) - box.styles.gutter.height
        others = sum(
            child.outer_size.height + child.styles.margin.top + child.styles.margin.bottom
            for child in box.children
            if child is not self.pick_list and child.display
        )
        rows = max(1, most - others)
        if rows != self.pick_list.fitted_rows:
            self.pick_list.fitted_rows = rows
            self.pick_list.refresh(layout=True)

    @property
    def highlighted_item(self) -> T | None:
        if not self.matches:
            return None
        return self.matches[self.pick_list.cursor]

    def refilter(self, *, initial: bool = False) -> None:
        """Recompute the matches for the current filter text and redraw."""
        self.matches = self.filter_items(self.query_text)
        cursor = self.initial_cursor(self.matches) if initial or not self.query_text else 0
        self.pick_list.reset(len(self.matches), cursor)

    def set_title(self, text: str) -> None:
        self.title_label.update(text)

    def set_hint(self, text: str) -> None:
        self.hint_label.update(text)

    def _render_row(self, index: int, highlighted: bool) -> Content:
        return self.render_item(self.matches[index], highlighted)

    @on(Input.Changed, "#picker-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.query_text = event.value
        self.refilter()

    @on(Input.Submitted, "#picker-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_select()

    @on(PickList.Highlighted)
    def _row_highlighted(self, event: PickList.Highlighted) -> None:
        event.stop()
        if 0 <= event.index < len(self.matches):
            self.item_highlighted(self.matches[event.index])

    @on(PickList.Chosen)
    def _row_chosen(self, event: PickList.Chosen) -> None:
        event.stop()
        self.action_select()

    def action_select(self) -> None:
        item = self.highlighted_item
        if item is not None:
            self.dismiss(self.result_for(item))

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_move(self, delta: int) -> None:
        self.pick_list.move(delta)

    def action_page(self, direction: int) -> None:
        self.pick_list.page(direction)

    def action_first(self) -> None:
        self.pick_list.first()

    def action_last(self) -> None:
        self.pick_list.last()
