"""Two subagents through the real Anthropic SDK against the wire-faithful server: both
children ask at once with fresh contexts, and one abort closes both of their connections."""

from __future__ import annotations

import asyncio
import json

import pytest

from picode.ai.types import ToolResultMessage
from picode.session.agent_session import AgentSession, SessionOptions
from picode.session.config.settings import Settings
from picode.tools import coding_tools
from tests.providers.models import wire_model
from tests.session.conftest import SessionHarness, run, wait_until
from tests.wire.anthropic_protocol import AnthropicStream
from tests.wire.server import Stall, WireServer


def _task_json(description: str, prompt: str) -> str:
    return json.dumps({"description": description, "prompt": prompt})


def test_esc_aborts_both_children_and_closes_both_connections(
    harness: SessionHarness, wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", wire.url)
    model = wire_model("anthropic-messages", wire)
    from picode.ai.models import builtin_registry

    wire.enqueue(
        AnthropicStream()
        .tool_use("toolu_1", "task", [_task_json("first", "job A")])
        .tool_use("toolu_2", "task", [_task_json("second", "job B")])
        .stop("tool_use")
        .response(),
        AnthropicStream().text("working", stop=False).chunk(Stall()).response(),
        AnthropicStream().text("working", stop=False).chunk(Stall()).response(),
    )

    async def scenario() -> None:
        session = await AgentSession.open(
            SessionOptions(
                cwd=harness.cwd,
                paths=harness.paths,
                settings=Settings(),
                registry=builtin_registry(),
                model=model,
                tools=coding_tools(harness.cwd),
                load_extensions=False,
            )
        )
        running = asyncio.ensure_future(session.prompt("the parent's own question"))
        # Both children are streaming at the same time.
        await wait_until(lambda: len(wire.requests) == 3, timeout=20)
        children = wire.requests[1:]
        for request in children:
            body = request.json
            assert [m["role"] for m in body["messages"]] == ["user"]
            assert "the parent's own question" not in json.dumps(body["messages"])
            assert "task" not in [tool["name"] for tool in body["tools"]]
        prompts = {json.dumps(r.json["messages"][0]["content"]) for r in children}
        assert {"job A" in p or "job B" in p for p in prompts} == {True}
        assert len(prompts) == 2
        session.abort()
        closed = await asyncio.gather(
            *(asyncio.to_thread(request.wait_closed, 5.0) for request in children)
        )
        assert closed == [True, True], "the server did not see both connections close"
        await asyncio.wait_for(running, 10)
        results = [m for m in session.messages if isinstance(m, ToolResultMessage)]
        assert [r.tool_name for r in results] == ["task", "task"]
        assert all(r.is_error for r in results)
        await session.close()

    run(scenario(), timeout=30)
