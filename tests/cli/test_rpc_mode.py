"""``picode --mode rpc``: commands on stdin, responses and events on stdout."""

from __future__ import annotations

import json

from tests.cli.apis import ApiDriver, ChatDriver
from tests.cli.harness import PicodeEnv
from tests.wire.server import Stall, WireServer


def test_prompt_abort_prompt(api: ApiDriver, wire: WireServer, picode: PicodeEnv) -> None:
    wire.enqueue(api.text_then("Thinking about", Stall()), api.text("Second answer."))
    child = picode.start("--mode", "rpc", "--model", api.model)
    try:
        child.send({"type": "prompt", "id": "p1", "message": "first question"})
        accepted = child.response("prompt")
        assert accepted["success"], accepted
        assert accepted["id"] == "p1"
        assert wire.wait_for_requests(1, timeout=60)
        child.event("message_update")  # the stalled reply has started streaming

        child.send({"type": "abort", "id": "a1"})
        aborted = child.response("abort")
        assert aborted["success"], aborted
        assert wire.requests[0].wait_closed(timeout=10), "abort must close the connection"

        child.send({"type": "prompt", "id": "p2", "message": "second question"})
        assert child.response("prompt")["success"]
        end = child.event("agent_end")
        final = end["messages"][-1]
        assert final["role"] == "assistant"
        assert final["stop_reason"] == "stop"
        assert [block["text"] for block in final["content"]] == ["Second answer."]

        child.send({"type": "get_messages", "id": "m"})
        messages = child.response("get_messages")["data"]["messages"]
        roles = [(m["role"], m.get("stop_reason")) for m in messages]
        assert roles == [
            ("user", None),
            ("assistant", "aborted"),
            ("user", None),
            ("assistant", "stop"),
        ]
        second_request = wire.requests[1].body.decode()
        assert "first question" in second_request and "second question" in second_request

        child.close_stdin()
        assert child.wait() == 0
    finally:
        child.stop()


def test_malformed_commands_get_error_responses(wire: WireServer, picode: PicodeEnv) -> None:
    api = ChatDriver()  # no SDK is loaded until a prompt runs: any API would do
    picode.add_config(api.config(wire))
    child = picode.start("--mode", "rpc", "--model", api.model)
    try:
        child.send("this is not json")
        assert "invalid JSON" in child.response("parse")["error"]
        child.send("[1, 2]")
        assert "JSON object" in child.response("parse")["error"]
        child.send({"type": "launch_rockets", "id": 7})
        unknown = child.response("launch_rockets")
        assert unknown["id"] == 7 and not unknown["success"]
        assert "prompt" in unknown["error"]  # lists the known commands
        child.send({"type": "prompt", "message": ""})
        assert "non-empty" in child.response("prompt")["error"]
        child.send({"type": "set_thinking_level", "level": "enormous"})
        assert "off" in child.response("set_thinking_level")["error"]
        child.send({"type": "set_model", "model": "nosuch/model"})
        assert "Unknown provider" in child.response("set_model")["error"]
        child.send({"type": "approve", "request_id": "approval-9", "decision": "yes"})
        assert "no pending approval" in child.response("approve")["error"]
        child.send_bytes(b'{"type": "steer", "message": "\xff\xfe"}\n')  # not UTF-8
        assert child.response("steer")["success"]  # decoded leniently, queued

        child.send({"type": "get_state", "id": "s"})
        state = child.response("get_state")
        assert state["success"]
        assert state["data"]["model"]["id"] == "test-model"
        assert state["data"]["is_running"] is False

        child.close_stdin()
        assert child.wait() == 0
        assert wire.requests == []
    finally:
        child.stop()


def test_approvals_are_asked_over_rpc(wire: WireServer, picode: PicodeEnv) -> None:
    api = ChatDriver()
    picode.add_config(api.config(wire))
    wire.enqueue(
        api.tool_call("call_no", "write", {"path": "denied.txt", "content": "no"}),
        api.tool_call("call_yes", "write", {"path": "allowed.txt", "content": "yes"}),
        api.text("One of two."),
    )
    child = picode.start("--mode", "rpc", "--approve", "--model", api.model)
    try:
        child.send({"type": "prompt", "message": "write two files"})
        first = child.event("approval_request")
        assert (first["tool_name"], first["tool_call_id"]) == ("write", "call_no")
        assert "denied.txt" in first["preview"]
        # The session itself asks, not a subagent.
        assert first["origin"] is None and first["origin_call_id"] is None
        assert first["always_means"] == "every write call"
        assert first["can_save"] is False  # only a command is saved for the folder
        child.send(
            {
                "type": "approve",
                "request_id": first["request_id"],
                "decision": "no",
                "reason": "not that one",
            }
        )
        assert child.response("approve")["success"]
        second = child.event("approval_request")
        assert second["tool_call_id"] == "call_yes"
        child.send({"type": "approve", "request_id": second["request_id"], "decision": "yes"})
        child.event("agent_end")
        child.close_stdin()
        assert child.wait() == 0
    finally:
        child.stop()

    assert not (picode.project / "denied.txt").exists()
    assert (picode.project / "allowed.txt").read_text(encoding="utf-8") == "yes"
    assert "not that one" in wire.requests[1].body.decode()  # the model learns why


def test_a_command_approved_for_the_folder_over_rpc_is_saved(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = ChatDriver()
    picode.add_config(api.config(wire))
    wire.enqueue(
        api.tool_call("call_1", "bash", {"command": "echo saved-run"}),
        api.tool_call("call_2", "bash", {"command": "echo unasked"}),
        api.text("Both ran."),
    )
    child = picode.start("--mode", "rpc", "--approve", "--model", api.model)
    try:
        child.send({"type": "prompt", "message": "echo twice"})
        asked = child.event("approval_request")
        assert asked["can_save"] is True
        assert asked["always_means"] == "commands starting with `echo`"
        child.send({"type": "approve", "request_id": asked["request_id"], "decision": "project"})
        assert child.response("approve")["success"]
        child.event("agent_end")  # the second echo was not asked about
        child.close_stdin()
        assert child.wait() == 0
    finally:
        child.stop()

    saved = json.loads((picode.home / "data" / "approved-commands.json").read_text("utf-8"))
    assert list(saved["folders"].values()) == [[{"words": ["echo"]}]]


def test_abort_right_after_prompt_leaves_picode_idle(wire: WireServer, picode: PicodeEnv) -> None:
    api = ChatDriver()
    picode.add_config(api.config(wire))
    wire.enqueue(api.text_then("never finished", Stall()))
    child = picode.start("--mode", "rpc", "--model", api.model)
    try:
        child.send(
            json.dumps({"type": "prompt", "message": "hello"})
            + "\n"
            + json.dumps({"type": "abort", "id": "stop"})
        )
        assert child.response("prompt")["success"]
        assert child.response("abort")["success"]
        child.send({"type": "get_state"})
        assert child.response("get_state")["data"]["is_running"] is False
        child.close_stdin()
        assert child.wait() == 0
    finally:
        child.stop()
    if wire.requests:  # the prompt got as far as the server before the abort
        assert wire.requests[0].wait_closed(timeout=5)


def test_a_prompt_sent_right_after_agent_end_is_never_refused_as_busy(
    wire: WireServer, picode: PicodeEnv
) -> None:
    # Back to back: each prompt goes out the moment the previous agent_end is read.
    api = ChatDriver()
    picode.add_config(api.config(wire))
    turns = 300
    wire.enqueue(*(api.text(f"answer {n}") for n in range(turns)))
    child = picode.start("--mode", "rpc", "--model", api.model)
    try:
        refused = 0
        for n in range(turns):
            child.send({"type": "prompt", "id": f"p{n}", "message": f"question {n}"})
            response = child.response("prompt")
            if not response["success"]:
                refused += 1
                continue
            child.event("agent_end")
        assert refused == 0
        assert len(wire.requests) == turns
        child.close_stdin()
        assert child.wait() == 0
    finally:
        child.stop()


def test_get_context_says_what_fills_the_window(
    api: ApiDriver, wire: WireServer, picode: PicodeEnv
) -> None:
    (picode.project / "AGENTS.md").write_text("Run the tests first.\n", encoding="utf-8")
    wire.enqueue(api.text("A short answer."))
    child = picode.start("--mode", "rpc", "--model", api.model)
    try:
        child.send({"type": "prompt", "message": "a question"})
        assert child.response("prompt")["success"]
        child.event("agent_end")
        child.send({"type": "get_context", "id": "c"})
        data = child.response("get_context")["data"]
        parts = {part["label"]: part["tokens"] for part in data["parts"]}
        assert data["window"] > data["in_use"] > 0
        assert data["compacts_at"] < data["window"]
        assert parts["AGENTS.md"] > 0 and parts["your messages"] > 0 and parts["replies"] > 0
        assert data["largest_results"] == []  # no tool ran
    finally:
        child.stop()
