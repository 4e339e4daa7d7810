"""Secrets end to end, through the real executable: the model's commands run without picode's
keys, and no key or token leaves in the json, rpc or acp streams or the session file.

The keys here have no known shape on purpose: only picode's memory of them (or the scrubbed
environment) can keep them out, not the token patterns.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.cli.acp_client import FakeEditor, connect, new_session, point_at, prompt
from tests.cli.apis import AnthropicDriver, use
from tests.cli.harness import PicodeEnv
from tests.wire.server import WireServer

KEY = "corp-gateway-token-5a7c9e-plain"
GITHUB = "plain-github-value-77aa31"
ALLOWED = "npm-allowed-value-3141"
GHP = "ghp_" + "M3n4B5v6" * 4 + "cXzL"


def _secret_env(picode: PicodeEnv) -> None:
    picode.env.update({"ANTHROPIC_API_KEY": KEY, "GITHUB_TOKEN": GITHUB, "NPM_TOKEN": ALLOWED})
    picode.add_config('[bash]\nenv_allow = ["NPM_TOKEN"]')


def test_env_run_by_the_model_and_the_json_stream_carry_no_key(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = use(AnthropicDriver(), wire, picode)
    _secret_env(picode)
    wire.enqueue(
        api.tool_call("call_env", "bash", {"command": "env; echo github=$GITHUB_TOKEN."}),
        api.text(f"Your key is {KEY} and the token {GHP}."),
    )

    result = picode.run("--mode", "json", "-p", "show the environment", "--model", api.model)

    assert result.returncode == 0, result.stderr
    events = result.json_lines()
    tool_end = next(e for e in events if e["type"] == "tool_execution_end")
    output = tool_end["result"]["content"][0]["text"]
    assert "ANTHROPIC_API_KEY=" not in output and "GITHUB_TOKEN=" not in output
    assert "github=." in output  # not set at all, not merely masked
    assert f"NPM_TOKEN={ALLOWED}" in output  # the user's allowlist
    assert "PATH=" in output and "HOME=" in output
    for leaked in (KEY, GITHUB, GHP):
        assert leaked not in result.stdout
        assert leaked not in picode.session_files()[0].read_text(encoding="utf-8")
    assert "[redacted]" in result.stdout
    # What went back to the model: the tool's output, without them either.
    sent = wire.requests[1].body.decode()
    assert GITHUB not in sent and KEY not in sent and "GITHUB_TOKEN=" not in sent


def test_the_rpc_stream_carries_no_key(wire: WireServer, picode: PicodeEnv) -> None:
    api = use(AnthropicDriver(), wire, picode)
    _secret_env(picode)
    (picode.project / "notes.txt").write_text(f"deploy with {GHP}\n", encoding="utf-8")
    wire.enqueue(
        api.tool_call("call_read", "read", {"path": "notes.txt"}),
        api.text(f"It says {GHP}; your key is {KEY}."),
    )
    child = picode.start("--mode", "rpc", "--model", api.model)
    try:
        child.send({"type": "prompt", "message": "read notes.txt"})
        child.event("agent_end")
        child.send({"type": "get_messages", "id": "m"})
        child.response("get_messages")
        child.close_stdin()
        assert child.wait() == 0
    finally:
        child.stop()
    stream = "".join(child.seen)
    assert KEY not in stream and GHP not in stream
    assert "deploy with [redacted]" in stream
    assert GHP not in wire.requests[1].body.decode()


def test_the_editor_terminal_and_acp_updates_carry_no_key(
    wire: WireServer, picode: PicodeEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = point_at(wire, picode)
    _secret_env(picode)
    # The editor runs the command with its own environment: here, the test's.
    monkeypatch.setenv("GITHUB_TOKEN", GITHUB)
    wire.enqueue(
        api.tool_call("call_env", "bash", {"command": "echo github=$GITHUB_TOKEN."}),
        api.text(f"The key is {KEY}."),
    )
    client = FakeEditor()

    async def script() -> Any:
        async with connect(picode, client, "--model", api.model, terminal=True) as (conn, _):
            session_id = (await new_session(conn, picode.project)).session_id
            return await prompt(conn, session_id, "run it")

    assert asyncio.run(script()).stop_reason == "end_turn"
    terminal = client.terminals["term-1"].output.decode()
    assert "github=." in terminal and GITHUB not in terminal
    assert KEY not in client.agent_text() and "[redacted]" in client.agent_text()
