"""``picode --mode acp`` driven by a real ACP client from the agent-client-protocol package."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.cli.apis import AnthropicDriver
from tests.cli.harness import PICODE, PicodeEnv
from tests.wire.server import Stall, WireServer

TIMEOUT = 60.0


class RecordingClient:
    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.changed = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update)
        self.changed.set()

    async def wait_for(self, kind: str) -> Any:
        async def find() -> Any:
            while True:
                for update in self.updates:
                    if update.session_update == kind:
                        return update
                self.changed.clear()
                await self.changed.wait()

        return await asyncio.wait_for(find(), TIMEOUT)

    def agent_text(self) -> str:
        chunks = [u for u in self.updates if u.session_update == "agent_message_chunk"]
        return "".join(u.content.text for u in chunks)


async def _drive(picode: PicodeEnv, model: str, script: Any) -> Any:
    from acp import PROTOCOL_VERSION, spawn_agent_process

    client = RecordingClient()
    command, *args = PICODE
    async with spawn_agent_process(
        client,  # type: ignore[arg-type]
        command,
        *args,
        "--mode",
        "acp",
        "--model",
        model,
        env=picode.env,
        cwd=picode.project,
    ) as (conn, _process):
        await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), TIMEOUT)
        session = await asyncio.wait_for(
            conn.new_session(cwd=str(picode.project), mcp_servers=[]), TIMEOUT
        )
        return await script(conn, client, session.session_id)


def _point_at(wire: WireServer, picode: PicodeEnv) -> AnthropicDriver:
    api = AnthropicDriver()
    picode.env.update(api.environment(wire))
    config = api.config(wire)
    if config:
        picode.add_config(config)
    return api


def test_streamed_answer(wire: WireServer, picode: PicodeEnv) -> None:
    from acp import text_block

    api = _point_at(wire, picode)
    wire.enqueue(api.text("Hello ", "from ", "picode."))

    async def script(conn: Any, client: RecordingClient, session_id: str) -> Any:
        response = await asyncio.wait_for(
            conn.prompt(session_id=session_id, prompt=[text_block("say hi")]), TIMEOUT
        )
        return response, client.agent_text()

    response, text = asyncio.run(_drive(picode, api.model, script))
    assert response.stop_reason == "end_turn"
    assert text == "Hello from picode."
    assert "say hi" in wire.requests[0].body.decode()


def test_cancel_closes_the_model_request(wire: WireServer, picode: PicodeEnv) -> None:
    from acp import RequestError, text_block

    api = _point_at(wire, picode)
    wire.enqueue(api.text_then("Thinking about", Stall()))

    async def script(conn: Any, client: RecordingClient, session_id: str) -> Any:
        running = asyncio.ensure_future(
            conn.prompt(session_id=session_id, prompt=[text_block("long question")])
        )
        await client.wait_for("agent_message_chunk")
        with pytest.raises(RequestError, match="Invalid request") as refused:
            await asyncio.wait_for(
                conn.prompt(session_id=session_id, prompt=[text_block("meanwhile")]), TIMEOUT
            )
        assert "already running" in str(refused.value.data)
        await conn.cancel(session_id=session_id)
        return await asyncio.wait_for(running, TIMEOUT)

    response = asyncio.run(_drive(picode, api.model, script))
    assert response.stop_reason == "cancelled"
    assert wire.requests[0].wait_closed(timeout=10), "cancel must close the connection"
