"""picode's own commands in an editor (ACP): advertised, then answered without the model."""

from __future__ import annotations

import asyncio
import shutil
from typing import Any

import pytest

from tests.cli.acp_client import FakeEditor, connect, new_session, point_at, prompt
from tests.cli.harness import PicodeEnv
from tests.wire.server import WireServer

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need git")


def test_undo_and_rewind_are_offered_and_restore_the_files(
    wire: WireServer, picode: PicodeEnv
) -> None:
    from acp import RequestError

    api = point_at(wire, picode)
    notes = picode.project / "notes.txt"
    notes.write_text("old\n", encoding="utf-8")
    wire.enqueue(
        api.tool_call("call_1", "bash", {"command": "echo new > notes.txt"}),
        api.text("Changed."),
        api.text("Fine."),
    )
    client = FakeEditor()

    async def script() -> Any:
        async with connect(picode, client, "--model", api.model) as (conn, _):
            session = await new_session(conn, picode.project)
            offered = await client.wait_for("available_commands_update")
            names = [command.name for command in offered.available_commands]
            await prompt(conn, session.session_id, "change the notes")
            assert notes.read_text(encoding="utf-8") == "new\n"
            listed = await prompt(conn, session.session_id, "/checkpoints")
            assert listed.stop_reason == "end_turn"
            undone = await prompt(conn, session.session_id, "/undo")
            assert undone.stop_reason == "end_turn"
            assert notes.read_text(encoding="utf-8") == "old\n"
            with pytest.raises(RequestError) as refused:
                await prompt(conn, session.session_id, "/rewind many")
            await prompt(conn, session.session_id, "hello again")
            return names, str(refused.value.data)

    names, refusal = asyncio.run(script())
    assert names == ["undo", "rewind", "checkpoints", "init"]  # then the prompt templates
    assert "1. change the notes" in client.agent_text()
    assert "Wrote back 1 file(s)." in client.agent_text()
    assert "usage: /rewind" in refusal
    # The commands never reached the model; the next prompt went on from before the undone one.
    assert len(wire.requests) == 3
    last = wire.requests[-1].body.decode()
    assert "hello again" in last and "change the notes" not in last
