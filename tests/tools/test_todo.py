from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from picode.agent.tool import ToolArgumentsError, tool_spec
from picode.tools.todo import MAX_CONTENT_CHARS, MAX_TODOS, TodoTool
from tests.tools.helpers import run


def _items(*pairs: tuple[str, str]) -> list[dict[str, Any]]:
    return [{"content": content, "status": status} for content, status in pairs]


def test_the_result_holds_the_whole_new_list() -> None:
    todos = _items(
        ("Read the parser", "completed"), ("Add tests", "in_progress"), ("Docs", "pending")
    )
    result = run(TodoTool(Path()), todos=todos)
    assert not result.is_error
    assert result.details == {"todos": todos}
    assert result.text_content.split("\n") == [
        "Todo list updated (1/3 completed):",
        "[x] Read the parser",
        "[>] Add tests",
        "[ ] Docs",
    ]


def test_a_list_sent_as_a_json_string_is_read_as_the_list() -> None:
    todos = _items(("Step", "pending"))
    result = run(TodoTool(Path()), todos=json.dumps(todos))
    assert result.details == {"todos": todos}


def test_an_empty_list_clears_it() -> None:
    result = run(TodoTool(Path()), todos=[])
    assert result.details == {"todos": []}
    assert result.text_content == "The todo list is now empty."


def test_content_becomes_one_line() -> None:
    result = run(TodoTool(Path()), todos=_items(("  Fix\nthe\t bug  ", "pending")))
    assert result.details == {"todos": _items(("Fix the bug", "pending"))}


@pytest.mark.parametrize(
    ("todos", "where"),
    [
        (_items(("Step", "done")), "'todos.0.status'"),
        (_items(("Step", "pending"), ("   \n", "pending")), "'todos.1.content'"),
        (_items(("", "pending")), "'todos.0.content'"),
        (_items(("x" * (MAX_CONTENT_CHARS + 1), "pending")), "'todos.0.content'"),
        (_items(*[(f"Step {n}", "pending") for n in range(MAX_TODOS + 1)]), "'todos'"),
        ([{"content": "Step"}], "'todos.0.status' is required"),
        ([{"content": "Step", "status": "pending", "priority": "high"}], "'todos.0.priority'"),
        ("Step one", "'todos'"),
    ],
)
def test_bad_lists_are_refused_with_where_the_problem_is(todos: Any, where: str) -> None:
    with pytest.raises(ToolArgumentsError) as info:
        TodoTool(Path()).validate({"todos": todos})
    assert where in str(info.value)


def test_the_limits_themselves_are_accepted() -> None:
    todos = _items(*[("x" * MAX_CONTENT_CHARS, "pending")] * MAX_TODOS)
    assert len(run(TodoTool(Path()), todos=todos).details["todos"]) == MAX_TODOS


def test_the_schema_names_the_statuses_and_it_counts_as_read_only() -> None:
    spec = tool_spec(TodoTool(Path()))
    item = spec.parameters["$defs"]["TodoItem"]
    assert item["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]
    assert spec.parameters["required"] == ["todos"]
    assert "in_progress" in spec.description
    assert TodoTool.read_only is True
