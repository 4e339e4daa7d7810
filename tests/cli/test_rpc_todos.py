"""The todo list over rpc: the todos_changed event and get_todos, through the installed
command and a real model server."""

from __future__ import annotations

import json

from tests.cli.apis import ChatDriver
from tests.cli.harness import PicodeEnv
from tests.wire.server import WireServer

PLAN = [
    {"content": "Read the parser", "status": "completed"},
    {"content": "Add tests", "status": "in_progress"},
]


def test_the_list_is_sent_as_it_changes_and_can_be_asked_for(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = ChatDriver()
    picode.add_config(api.config(wire))
    wire.enqueue(
        api.tool_call("call_1", "todo", {"todos": PLAN}),
        api.text("Working on it."),
        api.tool_call("call_2", "todo", {"todos": [{"content": "", "status": "pending"}]}),
        api.text("Sorry."),
    )
    child = picode.start("--mode", "rpc", "--model", api.model)
    try:
        child.send({"type": "get_todos"})
        assert child.response("get_todos")["data"] == {"todos": []}
        child.send({"type": "prompt", "message": "fix the parser"})
        changed = child.event("todos_changed")
        assert changed["todos"] == PLAN
        child.event("agent_end")
        child.send({"type": "get_todos"})
        assert child.response("get_todos")["data"] == {"todos": PLAN}

        # A refused call: an error result, and the list stays as it was.
        child.send({"type": "prompt", "message": "clear it"})
        end = child.event("tool_execution_end")
        assert end["is_error"] is True
        child.event("agent_end")
        child.send({"type": "get_todos"})
        assert child.response("get_todos")["data"] == {"todos": PLAN}
        changes = [line for line in child.seen if json.loads(line)["type"] == "todos_changed"]
        assert len(changes) == 1

        child.send({"type": "new_session"})
        assert child.event("todos_changed")["todos"] == []
        child.response("new_session")
        child.send({"type": "get_todos"})
        assert child.response("get_todos")["data"] == {"todos": []}
        child.close_stdin()
        assert child.wait() == 0
    finally:
        child.stop()
