"""The todo panel's lines: marks, the in-progress highlight, collapsing, untrusted text."""

from __future__ import annotations

from picode.session.todos import Todo, TodoStatus
from picode.tui.widgets.todos import MAX_LINES, TodoPanel, render_todos


def _todo(content: str, status: TodoStatus = "pending") -> Todo:
    return Todo(content, status)


def test_each_status_has_its_mark_and_the_one_in_progress_stands_out() -> None:
    shown = render_todos([_todo("a", "completed"), _todo("b", "in_progress"), _todo("c")])
    assert shown.plain.split("\n") == ["☑ a", "▶ b", "☐ c"]
    styles = {span.style for span in shown.spans if shown.plain[span.start : span.end] == "b"}
    assert styles == {"bold $accent"}
    struck = {span.style for span in shown.spans if shown.plain[span.start : span.end] == "a"}
    assert struck == {"$muted strike"}


def test_a_long_list_keeps_the_open_items_and_counts_the_rest() -> None:
    todos = [_todo(f"done {n}", "completed") for n in range(6)]
    todos += [_todo("now", "in_progress"), _todo("next"), _todo("later")]
    lines = render_todos(todos).plain.split("\n")
    assert lines == ["▶ now", "☐ next", "☐ later", "  +6 done"]


def test_too_many_open_items_keep_the_one_in_progress() -> None:
    todos = [_todo(f"step {n}") for n in range(12)] + [_todo("now", "in_progress")]
    todos.append(_todo("old", "completed"))
    lines = render_todos(todos).plain.split("\n")
    assert len(lines) == MAX_LINES
    assert "▶ now" in lines
    assert lines[-1] == "  +1 done, +6 more"


def test_the_model_s_text_is_plain_text_on_one_line() -> None:
    hostile = "[bold red]loud[/] \x1b]52;c;aGVsbG8=\x07\x1b[2J\x9b2J\nsecond line"
    shown = render_todos([_todo(hostile)])
    assert shown.plain == "☐ [bold red]loud[/] second line"
    assert not any(char in shown.plain for char in "\x1b\x9b\x07\n")
    assert {span.style for span in shown.spans} == {"$muted", "$foreground"}


def test_the_panel_is_hidden_when_empty_or_all_done() -> None:
    panel = TodoPanel()
    assert not panel.display
    panel.show([_todo("a", "in_progress")])
    assert panel.display
    panel.show([_todo("a", "completed")])
    assert not panel.display
    panel.show([])
    assert not panel.display
