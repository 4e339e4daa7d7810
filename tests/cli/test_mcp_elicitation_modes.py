"""A server asking for input: declined in print mode (said on stderr), forwarded over rpc."""

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


def test_rpc_forwards_a_request_for_input_and_checks_the_answer(
    wire: WireServer, picode: PicodeEnv, tmp_path: Path
) -> None:
    api = ChatDriver()
    record = tmp_path / "record.txt"
    picode.add_config(api.config(wire))
    picode.add_config(mcp_config(record))
    wire.enqueue(api.tool_call("call_1", "mcp__files__book", {}), api.text("Booked."))
    child = picode.start("--mode", "rpc", "--model", api.model)
    try:
        child.expect(
            lambda p: p.get("type") == "mcp_servers_changed" and p["servers"][0]["state"] == "ready"
        )
        # The server's prompts are listed with the commands.
        child.send({"type": "get_commands", "id": "c"})
        listed = child.response("get_commands")["data"]["commands"]
        [review] = [c for c in listed if c["source"] == "mcp"]
        assert (review["name"], review["argument_hint"]) == ("mcp__files__review", "<code> [focus]")
        child.send({"type": "prompt", "message": "book a table"})
        asked = child.event("elicitation_request")
        assert asked["server"] == "files" and "Chez MCP" in asked["message"]
        fields = {f["name"]: f for f in asked["fields"]}
        assert fields["guests"]["type"] == "integer" and fields["guests"]["maximum"] == 10
        assert fields["table"]["choices"] == ["inside", "terrace"]
        # A wrong value is refused and the request stays open for a better answer.
        child.send(
            {
                "type": "elicit",
                "id": "e1",
                "request_id": asked["request_id"],
                "action": "accept",
                "content": {"name": "Ada", "guests": 11},
            }
        )
        refused = child.response("elicit")
        assert not refused["success"] and "content.guests: at most 10" in refused["error"]
        child.send(
            {
                "type": "elicit",
                "id": "e2",
                "request_id": asked["request_id"],
                "action": "accept",
                "content": {"name": "Ada", "guests": 2, "vegan": True},
            }
        )
        assert child.response("elicit")["success"]
        end = child.event("tool_execution_end")
        assert end["result"]["content"][0]["text"] == "booked: Ada, 2, vegan=True, inside"
        child.close_stdin()
        assert child.wait() == 0
    finally:
        child.stop()
