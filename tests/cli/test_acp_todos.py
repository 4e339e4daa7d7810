"""The todo list over ACP: each change is a ``plan`` update, and a loaded session's plan
follows its history."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.cli.acp_client import FakeEditor, connect, new_session, point_at, prompt
from tests.cli.harness import PicodeEnv
from tests.wire.server import WireServer

PLAN = [
    {"content": "Read the parser", "status": "completed"},
    {"content": "Add tests", "status": "in_progress"},
    {"content": "Update the docs", "status": "pending"},
]


def _entries(update: Any) -> list[tuple[str, str, str]]:
    return [(e.content, e.status, e.priority) for e in update.entries]


def test_the_list_is_the_plan_live_and_after_a_load(wire: WireServer, picode: PicodeEnv) -> None:
    api = point_at(wire, picode)
    wire.enqueue(
        api.tool_call("call_t", "todo", {"todos": PLAN}),
        api.text("On it."),
        api.tool_call("call_c", "todo", {"todos": []}),
        api.text("Cleared."),
    )
    live = FakeEditor()

    async def first() -> str:
        async with connect(picode, live, "--model", api.model) as (conn, _):
            session_id = (await new_session(conn, picode.project)).session_id
            await prompt(conn, session_id, "fix the parser")
            return str(session_id)

    session_id = asyncio.run(first())
    expected = [(item["content"], item["status"], "medium") for item in PLAN]
    (plan,) = live.of_kind("plan")
    assert _entries(plan) == expected
    kinds = [u.session_update for u in live.updates]
    # After the call that made it, which reads as planning.
    assert kinds.index("plan") > kinds.index("tool_call_update")
    (call,) = live.of_kind("tool_call")
    assert call.kind == "think"

    loaded = FakeEditor()

    async def second() -> None:
        async with connect(picode, loaded, "--model", api.model) as (conn, _):
            await asyncio.wait_for(
                conn.load_session(cwd=str(picode.project), session_id=session_id), 30
            )
            replayed = [u.session_update for u in loaded.updates]
            assert replayed[-2:] == ["plan", "available_commands_update"]
            assert _entries(loaded.of_kind("plan")[0]) == expected
            await prompt(conn, session_id, "clear the list")
            plans = loaded.of_kind("plan")
            assert len(plans) == 2 and plans[-1].entries == []

    asyncio.run(second())
