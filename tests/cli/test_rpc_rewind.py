"""Undo over rpc, headless: get_checkpoints, rewind (dry run, code, conversation), undo,
get_tree, navigate and set_label, through the installed command and a real model server."""

from __future__ import annotations

import shutil

import pytest

from tests.cli.apis import ChatDriver
from tests.cli.harness import PicodeEnv
from tests.wire.server import WireServer

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need git")


def test_rewind_and_the_tree_over_rpc(wire: WireServer, picode: PicodeEnv) -> None:
    api = ChatDriver()
    picode.add_config(api.config(wire))
    (picode.project / "notes.txt").write_text("old\n", encoding="utf-8")
    wire.enqueue(
        api.text("Hello."),
        api.tool_call("call_1", "bash", {"command": "echo new > notes.txt && echo x > made.txt"}),
        api.text("Changed."),
        api.text("Another way."),
    )
    child = picode.start("--mode", "rpc", "--model", api.model)
    try:
        child.send({"type": "prompt", "message": "hi"})
        child.event("agent_end")
        child.send({"type": "prompt", "message": "change the notes"})
        child.event("agent_end")
        assert (picode.project / "notes.txt").read_text(encoding="utf-8") == "new\n"

        child.send({"type": "get_checkpoints"})
        checkpoints = child.response("get_checkpoints")["data"]["checkpoints"]
        assert [(c["text"], c["code"]) for c in checkpoints] == [
            ("hi", True),
            ("change the notes", True),
        ]
        target = checkpoints[1]["message_id"]

        child.send({"type": "rewind", "message_id": target, "dry_run": True})
        plan = child.response("rewind")["data"]["plan"]
        assert {(c["path"], c["action"]) for c in plan["changes"]} == {
            ("notes.txt", "write"),
            ("made.txt", "delete"),
        }
        assert (picode.project / "made.txt").exists()  # a dry run changes nothing

        child.send({"type": "rewind", "message_id": target, "restore": "both"})
        done = child.response("rewind")["data"]
        assert done["text"] == "change the notes"
        assert sorted(done["report"]["written"] + done["report"]["deleted"]) == [
            "made.txt",
            "notes.txt",
        ]
        assert (picode.project / "notes.txt").read_text(encoding="utf-8") == "old\n"
        assert not (picode.project / "made.txt").exists()
        child.send({"type": "get_messages"})
        messages = child.response("get_messages")["data"]["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant"]

        child.send({"type": "prompt", "message": "do it differently"})
        child.event("agent_end")
        assert "change the notes" not in wire.requests[-1].body.decode()

        child.send({"type": "get_tree"})
        nodes = child.response("get_tree")["data"]["nodes"]
        hello = next(n for n in nodes if n["text"] == "Hello.")
        assert [n["text"] for n in nodes if n["parent_id"] == hello["entry_id"]] == [
            "change the notes",
            "do it differently",
        ]
        assert next(n for n in nodes if n["current"])["text"] == "Another way."
        old = next(n for n in nodes if n["text"] == "Changed.")
        child.send({"type": "navigate", "entry_id": old["entry_id"]})
        moved = child.response("navigate")
        assert moved["success"], moved
        child.send({"type": "set_label", "entry_id": old["entry_id"], "label": "first try"})
        assert child.response("set_label")["success"]
        child.send({"type": "get_tree"})
        nodes = child.response("get_tree")["data"]["nodes"]
        current = next(n for n in nodes if n["current"])
        assert (current["text"], current["label"]) == ("Changed.", "first try")

        child.send({"type": "rewind", "message_id": "nope"})
        assert "no message" in child.response("rewind")["error"]
        child.send({"type": "rewind", "message_id": target, "restore": "everything"})
        assert "code, conversation or both" in child.response("rewind")["error"]
        child.close_stdin()
        assert child.wait() == 0
    finally:
        child.stop()
