"""A server asking for input in print mode: declined, and said on stderr."""

from __future__ import annotations

from pathlib import Path

from tests.cli.apis import ChatDriver
from tests.cli.harness import PicodeEnv
from tests.cli.test_mcp_modes import mcp_config
from tests.session.mcp.conftest import recorded
from tests.wire.server import WireServer


def test_print_mode_declines_a_request_for_input_and_says_so(
    wire: WireServer, picode: PicodeEnv, tmp_path: Path
) -> None:
    api = ChatDriver()
    record = tmp_path / "record.txt"
    picode.add_config(api.config(wire))
    picode.add_config(mcp_config(record))
    wire.enqueue(api.tool_call("call_1", "mcp__files__book", {}), api.text("No table."))

    result = picode.run("-p", "book a table", "--model", api.model)

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "No table."
    assert "MCP server 'files' asked for input and was declined" in result.stderr
    # The server's words reach the terminal escaped, never as raw control characters.
    assert "\x1b[2J" not in result.stderr
    assert "book decline" in recorded(record)
    assert "not booked: decline" in wire.requests[1].body.decode()
