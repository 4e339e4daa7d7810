"""The model's todo list above the editor, shown while any item is still open.

One line per item: ☐ pending, ▶ in progress (highlighted), ☑ completed (struck through).
A long list keeps to the open items and counts the finished ones ("+N done"). The items are
the model's text: drawn as plain text (``Content`` never parses markup), with escape
sequences and control characters removed (``picode.ai.untrusted.safe``), on one line each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import Static

from picode.ai.untrusted import safe

if TYPE_CHECKING:
    from picode.session.todos import Todo

#: Lines the panel may take; a longer list is collapsed to its open items.
MAX_LINES = 8

_MARKS = {"pending": "☐ ", "in_progress": "▶ ", "completed": "☑ "}
_MARK_STYLES = {"pending": "$muted", "in_progress": "$accent", "completed": "$muted"}
_TEXT_STYLES = {
    "pending": "$foreground",
    "in_progress": "bold $accent",
    "completed": "$muted strike",
}


class TodoPanel(Static):
    DEFAULT_CSS = """
    TodoPanel {
        height: auto;
        max-height: 9;
        padding: 0 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def __init__(self) -> None:
        super().__init__("", id="todos")
        self.todos: list[Todo] = []
        self.display = False

    def show(self, todos: Sequence[Todo]) -> None:
        self.todos = list(todos)
        self.display = any(todo.status != "completed" for todo in self.todos)
        self.update(render_todos(self.todos) if self.display else "")


def render_todos(todos: Sequence[Todo], max_lines: int = MAX_LINES) -> Content:
    """The panel's lines: every item when they fit, else the open ones (in progress first
    to be kept) and a count of what is left out."""
    if len(todos) <= max_lines:
        return Content("\n").join(_line(todo) for todo in todos)
    open_items = [todo for todo in todos if todo.status != "completed"]
    done = len(todos) - len(open_items)
    room = max_lines - 1  # the last line counts what is not shown
    kept = {id(t) for t in open_items if t.status == "in_progress"}
    for todo in open_items:
        if len(kept) >= room:
            break
        kept.add(id(todo))
    shown = [todo for todo in open_items if id(todo) in kept][:room]
    more = len(open_items) - len(shown)
    counts = [f"+{done} done"] if done else []
    counts += [f"+{more} more"] if more else []
    lines = [_line(todo) for todo in shown]
    lines.append(Content.styled("  " + ", ".join(counts), "$muted italic"))
    return Content("\n").join(lines)


def _line(todo: Todo) -> Content:
    status = todo.status if todo.status in _MARKS else "pending"
    text = " ".join(safe(todo.content).split())
    return Content.assemble((_MARKS[status], _MARK_STYLES[status]), (text, _TEXT_STYLES[status]))
