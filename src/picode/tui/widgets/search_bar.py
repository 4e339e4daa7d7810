"""The transcript search field: a line under the transcript while a search is open.

It only reports what the person does (the text typed, a step to another match) to the
callbacks it is given; the search itself is ``controllers/search.py``. Esc closes it
through the app's Esc chain.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Input, Static

HINT = "enter/↑ older · ↓ newer · esc close"


class SearchBar(Horizontal):
    DEFAULT_CSS = """
    SearchBar {
        height: 1;
        padding: 0 1;
        background: $surface;
    }
    SearchBar > #search-label {
        width: auto;
        color: $accent;
        text-style: bold;
    }
    SearchBar > #search-input {
        width: 1fr;
        border: none;
        height: 1;
        padding: 0 1;
        background: $surface;
    }
    SearchBar > #search-input:focus {
        border: none;
        background-tint: transparent;
    }
    SearchBar > #search-count {
        width: auto;
        color: $text-muted;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "step(-1)", "Older match", show=False),
        Binding("down", "step(1)", "Newer match", show=False),
    ]

    def __init__(self, *, on_query: Callable[[str], None], on_step: Callable[[int], None]) -> None:
        super().__init__(id="search-bar")
        self.display = False
        self._on_query = on_query
        #: -1: the match above (older); 1: the one below (newer).
        self._on_step = on_step
        self.input = Input(placeholder="Search the conversation…", id="search-input", compact=True)
        self.count = Static("", id="search-count", markup=False)

    def compose(self) -> ComposeResult:
        yield Static("find", id="search-label", markup=False)
        yield self.input
        yield self.count

    def show_count(self, current: int | None, total: int, query: str) -> None:
        if not query.strip():
            text = HINT
        elif not total:
            text = f"no matches · {HINT}"
        else:
            text = f"{(current or 0) + 1} of {total} · {HINT}"
        self.count.update(Content(text))

    @on(Input.Changed, "#search-input")
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        self._on_query(event.value)

    @on(Input.Submitted, "#search-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._on_step(-1)

    def action_step(self, direction: int) -> None:
        self._on_step(direction)
