"""Plan mode over ``picode --mode rpc``: ``set_mode``, ``get_state``'s mode, the
``mode_changed`` event, and the plan of ``exit_plan_mode`` as a ``plan_request`` answered
with ``answer_plan``."""

from __future__ import annotations

from tests.cli.apis import ChatDriver
from tests.cli.harness import PicodeEnv
from tests.wire.server import WireServer

PLAN = "1. write planned.txt"


def test_plan_mode_over_rpc(wire: WireServer, picode: PicodeEnv) -> None:
    api = ChatDriver()
    picode.add_config(api.config(wire))
    wire.enqueue(
        api.tool_call("call_early", "write", {"path": "planned.txt", "content": "early"}),
        api.tool_call("call_plan", "exit_plan_mode", {"plan": PLAN}),
        api.text("Let me think again."),
        api.tool_call("call_plan2", "exit_plan_mode", {"plan": PLAN}),
        api.tool_call("call_write", "write", {"path": "planned.txt", "content": "done"}),
        api.text("Written."),
    )
    child = picode.start("--mode", "rpc", "--model", api.model)
    try:
        child.send({"type": "set_mode", "mode": "sideways"})
        assert "unknown mode" in child.response("set_mode")["error"]
        child.send({"type": "set_mode", "mode": "plan"})
        assert child.event("mode_changed")["mode"] == "plan"  # the event comes first
        assert child.response("set_mode")["data"] == {"mode": "plan"}
        child.send({"type": "get_state"})
        assert child.response("get_state")["data"]["mode"] == "plan"

        child.send({"type": "prompt", "message": "write planned.txt"})
        first = child.event("plan_request")
        assert (first["plan"], first["tool_call_id"]) == (PLAN, "call_plan")
        child.send(
            {
                "type": "answer_plan",
                "request_id": first["request_id"],
                "decision": "feedback",
                "feedback": "name it planned.txt",
            }
        )
        assert child.response("answer_plan")["success"]
        child.event("agent_end")
        child.send({"type": "answer_plan", "request_id": first["request_id"], "decision": "x"})
        assert "no pending plan" in child.response("answer_plan")["error"]

        child.send({"type": "prompt", "message": "again"})
        second = child.event("plan_request")
        child.send(
            {
                "type": "answer_plan",
                "request_id": second["request_id"],
                "decision": "approve",
                "policy": "never",
            }
        )
        assert child.event("mode_changed")["mode"] == "never"
        child.event("agent_end")
        child.close_stdin()
        assert child.wait() == 0
    finally:
        child.stop()

    assert (picode.project / "planned.txt").read_text(encoding="utf-8") == "done"
    bodies = [request.body.decode() for request in wire.requests]
    assert "plan mode" in bodies[1]  # the early write was refused
    assert "name it planned.txt" in bodies[2]  # the feedback reached the model
