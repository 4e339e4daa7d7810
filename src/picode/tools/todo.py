"""todo: the model's checklist for multi-step work, shown to the person as it changes.

The tool holds no list: each call's arguments are the whole new list, validated here, and
the result's details carry it (``{"todos": [{"content": str, "status": str}, ...]}``). The
session that ran the call keeps it (``session/todos.py``), saves it and tells front ends;
a call that fails validation is an error result and changes nothing. So one tool object can
serve any number of sessions.

It only writes to that list: never asked about, and allowed where only reading is
(``read_only``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator

from picode.agent.tool import BaseTool, OnUpdate, StrictParams, ToolResult
from picode.ai.abort import AbortSignal

TodoStatus = Literal["pending", "in_progress", "completed"]
#: More than a person can follow in a panel above the editor, or a model can keep honest.
MAX_TODOS = 50
MAX_CONTENT_CHARS = 500

DESCRIPTION = f"""\
Keep a checklist of the steps of the current task; the user sees it live.

Use it for work with three or more distinct steps, or when the user asks for several \
things at once; skip it for a single quick change or a question. Each call replaces the \
whole list: send every item with its status (pending, in_progress or completed). Mark an \
item in_progress before you start it and keep exactly one in_progress at a time; mark it \
completed as soon as it is done, not in a batch at the end; add the steps you discover \
and remove the ones that no longer apply. content is one short line in the imperative \
("Add tests for the parser"). At most {MAX_TODOS} items; an empty list clears it."""

MARKS: dict[str, str] = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}


class TodoItem(StrictParams):
    content: str = Field(
        max_length=MAX_CONTENT_CHARS, description="What the step is, one short line."
    )
    status: TodoStatus = Field(description="pending, in_progress or completed.")

    @field_validator("content")
    @classmethod
    def _one_line(cls, value: str) -> str:
        # One line on screen: runs of whitespace (newlines included) become one space.
        joined = " ".join(value.split())
        if not joined:
            raise ValueError("must not be empty")
        return joined


class TodoParams(StrictParams):
    todos: list[TodoItem] = Field(
        max_length=MAX_TODOS,
        description="The whole list, in order; it replaces the previous one.",
    )

    @field_validator("todos", mode="before")
    @classmethod
    def _decoded(cls, value: Any) -> Any:
        # Some models send a nested array as a JSON string; its meaning is not in doubt.
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError:
                return value
        return value


class TodoTool(BaseTool):
    name = "todo"
    label = "Todo"
    description = DESCRIPTION
    params_model = TodoParams
    #: It changes no file and runs nothing: plan mode allows it, approval never asks.
    read_only: ClassVar[bool] = True

    def __init__(self, cwd: Path) -> None:
        # Built like every tool, from the session's folder; the list is not tied to it.
        self.cwd = cwd

    async def run(self, args: TodoParams, signal: AbortSignal, on_update: OnUpdate) -> ToolResult:
        todos = [{"content": item.content, "status": item.status} for item in args.todos]
        return ToolResult.text(summary(todos), {"todos": todos})


def summary(todos: list[dict[str, Any]]) -> str:
    """What the model reads back: the list it now holds, one line per item."""
    if not todos:
        return "The todo list is now empty."
    done = sum(1 for item in todos if item["status"] == "completed")
    lines = [f"Todo list updated ({done}/{len(todos)} completed):"]
    lines += [f"{MARKS[item['status']]} {item['content']}" for item in todos]
    return "\n".join(lines)
