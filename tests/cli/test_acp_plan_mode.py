"""Plan mode over ACP: ``session/set_mode`` to "plan", writes refused, the plan asked as a
permission request, and the mode the agent leaves for sent as ``current_mode_update``."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.cli.acp_client import FakeEditor, connect, new_session, point_at, prompt
from tests.cli.harness import PicodeEnv
from tests.wire.server import WireServer

PLAN = "1. write planned.txt"


def test_plan_mode_asks_the_plan_as_a_permission(wire: WireServer, picode: PicodeEnv) -> None:
    api = point_at(wire, picode)
    wire.enqueue(
        api.tool_call("call_early", "write", {"path": "planned.txt", "content": "early\n"}),
        api.tool_call("call_plan", "exit_plan_mode", {"plan": PLAN}),
        api.tool_call("call_plan2", "exit_plan_mode", {"plan": PLAN}),
        api.tool_call("call_write", "write", {"path": "planned.txt", "content": "done\n"}),
        api.text("Written."),
    )
    client = FakeEditor(answers=["keep_planning", "approve_edits", "yes"])

    async def script() -> Any:
        async with connect(picode, client, "--model", api.model) as (conn, _):
            session_id = (await new_session(conn, picode.project)).session_id
            await conn.set_session_mode(session_id=session_id, mode_id="plan")
            return await prompt(conn, session_id, "write planned.txt")

    assert asyncio.run(script()).stop_reason == "end_turn"
    asked = [(ask.tool_call_id, ask.title) for ask in client.asked]
    assert [call_id for call_id, _ in asked] == ["call_plan", "call_plan2", "call_write"]
    assert PLAN in client.asked[0].content[0].content.text
    assert (picode.project / "planned.txt").read_text() == "done\n"
    modes = [u.current_mode_id for u in client.of_kind("current_mode_update")]
    assert modes[-1] == "edits"  # approved asking for edits: the write was asked about
    bodies = [request.body.decode() for request in wire.requests]
    assert "plan mode" in bodies[1]  # the early write was refused
    assert "keep planning" in bodies[2]
