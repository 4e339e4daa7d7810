"""MCP servers in ``--mode json`` and ``--mode rpc``: the real executable, a real stdio MCP
server (tests/session/mcp/server.py) and the scripted wire server."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from tests.cli.apis import ChatDriver
from tests.cli.harness import PicodeEnv
from tests.session.mcp.conftest import SERVER
from tests.wire.server import WireServer


def mcp_config(record: Path, *extra: str, timeout_s: float = 30) -> str:
    return (
        "[mcp.servers.files]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([str(SERVER), 'stdio', *extra])}\n"
        f"env = {{ MCP_TEST_RECORD = {json.dumps(str(record))} }}\n"
        f"timeout_s = {timeout_s}\n"
    )


def test_json_mode_calls_an_mcp_tool_and_reports_server_states(
    wire: WireServer, picode: PicodeEnv, tmp_path: Path
) -> None:
    api = ChatDriver()
    picode.add_config(api.config(wire))
    picode.add_config(mcp_config(tmp_path / "record.txt"))
    wire.enqueue(
        api.tool_call("call_1", "mcp__files__echo", {"text": "from json"}), api.text("Done.")
    )

    result = picode.run("--mode", "json", "-p", "echo something", "--model", api.model)

    assert result.returncode == 0, result.stderr
    events = result.json_lines()
    states = [
        server["state"]
        for event in events
        if event["type"] == "mcp_servers_changed"
        for server in event["servers"]
    ]
    assert "ready" in states
    first_request = wire.requests[0].body.decode()
    assert "mcp__files__echo" in first_request
    [end] = [e for e in events if e["type"] == "tool_execution_end"]
    assert end["tool_name"] == "mcp__files__echo" and not end["is_error"]
    assert end["result"]["content"][0]["text"] == "echo: from json"


def test_rpc_get_mcp(wire: WireServer, picode: PicodeEnv, tmp_path: Path) -> None:
    api = ChatDriver()
    picode.add_config(api.config(wire))
    picode.add_config(mcp_config(tmp_path / "record.txt"))
    child = picode.start("--mode", "rpc", "--model", api.model)
    try:
        child.expect(
            lambda p: p.get("type") == "mcp_servers_changed" and p["servers"][0]["state"] == "ready"
        )
        child.send({"type": "get_mcp", "id": "m"})
        [server] = child.response("get_mcp")["data"]["servers"]
        assert server["name"] == "files"
        assert server["transport"] == "stdio"
        assert "mcp__files__echo" in server["tools"]
        assert server["error"] is None
        child.close_stdin()
        assert child.wait() == 0
    finally:
        child.stop()


def test_print_mode_names_a_server_that_timed_out(
    wire: WireServer, picode: PicodeEnv, tmp_path: Path
) -> None:
    api = ChatDriver()
    picode.add_config(api.config(wire))
    picode.add_config(mcp_config(tmp_path / "record.txt", "--slow-start", timeout_s=1))
    wire.enqueue(api.text("Fine."))

    result = picode.run("-p", "hello", "--model", api.model)

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Fine."
    assert "MCP server 'files' is timed out: no answer within 1 s" in result.stderr
    assert "mcp__files__" not in wire.requests[0].body.decode()


def test_ctrl_c_while_print_mode_waits_for_servers(
    wire: WireServer, picode: PicodeEnv, tmp_path: Path
) -> None:
    api = ChatDriver()
    record = tmp_path / "record.txt"
    picode.add_config(api.config(wire))
    picode.add_config(mcp_config(record, "--slow-start", timeout_s=600))
    child = picode.start("-p", "hello", "--model", api.model)
    child.close_stdin()  # piped stdin is read as part of the prompt
    try:
        deadline = time.monotonic() + 60
        # The server runs in another process: its record file is all there is to wait on.
        while not record.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert record.exists(), child.stderr()
        child.interrupt()
        assert child.wait(timeout=30) == 130
        assert "interrupted" in child.stderr()
        assert wire.requests == []
    finally:
        child.stop()
