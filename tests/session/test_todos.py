"""The todo list: taken from the ``todo`` tool's calls, saved on the branch, restored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from picode.agent.events import ToolExecutionEnd
from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.ai.types import ToolResultMessage
from picode.session.events import SessionSwitched, TodosChanged
from picode.session.store.sessions import is_compaction_summary
from picode.session.todos import Todo, todos_from
from tests.session.conftest import SessionHarness, run

PLAN = [
    {"content": "Read the parser", "status": "completed"},
    {"content": "Add tests", "status": "in_progress"},
    {"content": "Update the docs", "status": "pending"},
]
LATER = [{**item, "status": "completed"} for item in PLAN]


def _todos(items: list[dict[str, str]]) -> list[Todo]:
    return [Todo(item["content"], item["status"]) for item in items]  # type: ignore[arg-type]


def _todo_turn(items: Any) -> Any:
    return tool_turn(FauxToolCall("todo", {"todos": items}))


def _saved_lists(path: Path | None) -> list[Any]:
    assert path is not None
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    return [e["data"] for e in entries if e.get("type") == "custom" and e["custom_type"] == "todos"]


def test_a_call_replaces_the_list_tells_front_ends_and_is_saved(harness: SessionHarness) -> None:
    async def scenario() -> None:
        faux = harness.faux(_todo_turn(PLAN), text_turn("on it"))
        session = await harness.open(faux, session="new")
        assert session.todos == []
        await session.prompt("fix the parser")
        assert session.todos == _todos(PLAN)
        changes = harness.of_type(TodosChanged)
        assert [change.todos for change in changes] == [_todos(PLAN)]
        # After the call's end: a front end has drawn the call when the panel changes.
        ends = [e for e in harness.events if isinstance(e, ToolExecutionEnd)]
        assert harness.events.index(ends[0]) < harness.events.index(changes[0])
        result = next(m for m in session.messages if isinstance(m, ToolResultMessage))
        assert "[>] Add tests" in result.text
        assert _saved_lists(session.session_file_path) == [{"todos": PLAN}]
        await session.close()

    run(scenario())


def test_a_refused_call_leaves_the_list_as_it_was(harness: SessionHarness) -> None:
    async def scenario() -> None:
        bad = [{"content": "Ship it", "status": "done"}]
        faux = harness.faux(_todo_turn(PLAN), _todo_turn(bad), _todo_turn([]), text_turn("ok"))
        session = await harness.open(faux, session="new")
        await session.prompt("go")
        results = [m for m in session.messages if isinstance(m, ToolResultMessage)]
        assert [r.is_error for r in results] == [False, True, False]
        assert "todos.0.status" in results[1].text
        # The empty list cleared it; the refused call in between changed nothing.
        changes = [change.todos for change in harness.of_type(TodosChanged)]
        assert changes == [_todos(PLAN), []]
        assert _saved_lists(session.session_file_path) == [{"todos": PLAN}, {"todos": []}]
        assert session.todos == []
        await session.close()

    run(scenario())


def test_resuming_a_session_restores_its_list(harness: SessionHarness) -> None:
    async def scenario() -> None:
        faux = harness.faux(_todo_turn(PLAN), text_turn("a"), _todo_turn(LATER), text_turn("b"))
        session = await harness.open(faux, session="new")
        await session.prompt("first")
        await session.prompt("second")
        path = session.session_file_path
        await session.close()
        reopened = await harness.open(faux, session=str(path))
        assert reopened.todos == _todos(LATER)
        await reopened.close()

    run(scenario())


def test_new_resume_and_fork_each_take_their_conversation_s_list(
    harness: SessionHarness,
) -> None:
    async def scenario() -> None:
        faux = harness.faux(_todo_turn(PLAN), text_turn("a"), _todo_turn(LATER), text_turn("b"))
        session = await harness.open(faux, session="new")
        await session.prompt("first")
        await session.prompt("second")
        first = str(session.session_file_path)
        harness.events.clear()
        await session.new_session()
        assert session.todos == []
        # Told after the switch, so a front end that resets on SessionSwitched keeps it.
        kinds = [type(e) for e in harness.events if isinstance(e, SessionSwitched | TodosChanged)]
        assert kinds == [SessionSwitched, TodosChanged]
        assert harness.of_type(TodosChanged)[-1].todos == []
        await session.switch_session(first)
        assert session.todos == _todos(LATER)
        assert harness.of_type(TodosChanged)[-1].todos == _todos(LATER)
        # A fork before "second" holds the list as it was then.
        second = session.user_messages_for_fork()[1][0]
        assert await session.fork(second) == "second"
        assert session.todos == _todos(PLAN)
        await session.switch_session(first)
        await session.fork(session.user_messages_for_fork()[0][0])  # before any list
        assert session.todos == []
        await session.close()

    run(scenario())


def test_moving_in_the_tree_takes_the_list_of_that_point(harness: SessionHarness) -> None:
    async def scenario() -> None:
        faux = harness.faux(_todo_turn(PLAN), text_turn("a"), _todo_turn(LATER), text_turn("b"))
        session = await harness.open(faux, session="new")
        await session.prompt("first")
        await session.prompt("second")
        first_answer = next(n for n in session.tree() if n.text == "a")
        await session.navigate(first_answer.entry_id)
        assert session.todos == _todos(PLAN)
        end = next(n for n in session.tree() if n.text == "b")
        await session.navigate(end.entry_id)
        assert session.todos == _todos(LATER)
        await session.close()

    run(scenario())


def test_only_a_whole_well_formed_list_counts() -> None:
    assert todos_from({"todos": PLAN}) == _todos(PLAN)
    assert todos_from({"todos": []}) == []
    # Another tool's details, or a damaged entry: not a list, so nothing changes.
    assert todos_from(None) is None
    assert todos_from({"path": "x"}) is None
    assert todos_from({"todos": [{"content": "x", "status": "maybe"}]}) is None
    assert todos_from({"todos": [{"content": 3, "status": "pending"}]}) is None
    assert todos_from({"todos": ["x"]}) is None


def test_a_compaction_summary_carries_the_list_and_so_does_its_resume(
    harness: SessionHarness,
) -> None:
    """The calls that built the list are summarised away; the list itself is not."""

    async def scenario() -> None:
        faux = harness.faux(
            _todo_turn(PLAN),
            text_turn("x" * 2000),
            text_turn("y" * 2000),
            text_turn("The summary."),
            text_turn("next"),
        )
        session = await harness.open(faux, session="new")
        await session.prompt("plan it")
        await session.prompt("go on")
        await session.compact(keep_recent_tokens=50)
        summary = session.messages[0].text
        assert is_compaction_summary(session.messages[0])
        assert "The summary." in summary
        assert "Todo list:\n[x] Read the parser\n[>] Add tests\n[ ] Update the docs" in summary
        assert not any(isinstance(m, ToolResultMessage) for m in session.messages)
        await session.prompt("continue")
        sent = faux.requests[-1].messages[0]
        assert "[>] Add tests" in sent.text  # type: ignore[union-attr]
        session_id = session.session_id
        await session.close()

        resumed = await harness.open(faux, session=session_id)
        assert "[>] Add tests" in resumed.messages[0].text
        await resumed.close()

    run(scenario())


def test_no_list_adds_nothing_to_the_summary(harness: SessionHarness) -> None:
    async def scenario() -> None:
        faux = harness.faux(text_turn("x" * 2000), text_turn("y" * 2000), text_turn("Short."))
        session = await harness.open(faux, session="new")
        await session.prompt("one")
        await session.prompt("two")
        await session.compact(keep_recent_tokens=50)
        assert "Todo list" not in session.messages[0].text
        await session.close()

    run(scenario())
