"""The model's todo list: the session holds it, saves it and tells front ends (docs/sessions.md,
"The todo list").

A part of ``AgentSession`` (it inherits this). The ``todo`` tool (``tools/todo.py``) keeps
no list: a call that succeeded carries the whole new list in its result's details, and this
part takes it from there, so a call that failed changes nothing. Each change is saved as a
custom entry on the branch, so resuming, ``/fork`` and moving in the tree find the list as
it was at that point, and ``/new`` starts without one.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

from picode.agent.events import ToolExecutionEnd
from picode.session.events import TodosChanged
from picode.session.store.branch_context import TODOS

if TYPE_CHECKING:
    from picode.agent.events import AgentEvent
    from picode.session.events import AnySessionEvent
    from picode.session.store.recorder import SessionRecorder

log = logging.getLogger(__name__)

#: The tool whose results change the list (matched by name: the session does not import tools).
TODO_TOOL = "todo"
TodoStatus = Literal["pending", "in_progress", "completed"]
TODO_STATUSES: tuple[TodoStatus, ...] = get_args(TodoStatus)


@dataclass(frozen=True, slots=True)
class Todo:
    content: str
    status: TodoStatus

    def as_record(self) -> dict[str, str]:
        return {"content": self.content, "status": self.status}


def todos_from(data: Any) -> list[Todo] | None:
    """The list in a todo result's details or a saved entry (``{"todos": [...]}``); None
    when ``data`` is not one (another tool of that name, a damaged entry)."""
    items = data.get("todos") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return None
    todos: list[Todo] = []
    for item in items:
        content = item.get("content") if isinstance(item, dict) else None
        status = item.get("status") if isinstance(item, dict) else None
        if not isinstance(content, str) or status not in TODO_STATUSES:
            return None
        todos.append(Todo(content, status))
    return todos


#: How each status reads in text the model gets: the marks of the ``todo`` tool's results
#: (``tools/todo.py``, a sibling this layer does not import), so both read alike.
TEXT_MARKS: dict[TodoStatus, str] = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}


def todo_text(todos: list[Todo]) -> str:
    """The list as a compaction summary carries it: the model's own list outlives the
    messages that built it. Empty when there is none."""
    if not todos:
        return ""
    return "Todo list:\n" + "\n".join(f"{TEXT_MARKS[t.status]} {t.content}" for t in todos)


def records(todos: list[Todo]) -> list[dict[str, str]]:
    return [todo.as_record() for todo in todos]


class TodoControls:
    _todos: list[Todo]
    _recorder: SessionRecorder

    async def _emit(self, event: AnySessionEvent) -> None:
        raise NotImplementedError

    @property
    def todos(self) -> list[Todo]:
        """The model's todo list as it stands (a copy); ``TodosChanged`` tells of changes."""
        return list(self._todos)

    async def _on_todo_event(self, event: AgentEvent) -> None:
        """Take the list of a ``todo`` call that succeeded (subscribed to the agent)."""
        if not isinstance(event, ToolExecutionEnd) or event.tool_name != TODO_TOOL:
            return
        todos = None if event.is_error else todos_from(event.result.details)
        if todos is None:
            return
        self._todos = todos
        try:
            self._recorder.record_custom(TODOS, {"todos": records(todos)})
        except OSError:
            # The next message's save fails the same way and says so (``SaveFailed``).
            log.warning("could not save the todo list", exc_info=True)
        await self._emit(TodosChanged(list(todos)))

    async def _take_saved_todos(self, saved: Any) -> None:
        """Another conversation is in place (/new, /resume, /fork, the tree): its list, told
        after ``SessionSwitched`` even when it did not change."""
        self._todos = todos_from(saved) or []
        await self._emit(TodosChanged(list(self._todos)))
