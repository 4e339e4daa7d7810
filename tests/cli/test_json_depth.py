"""A line nested far deeper than any command gets an error in rpc and acp mode, and the
mode keeps serving (it used to die of RecursionError)."""

from __future__ import annotations

from tests.cli.acp_client import point_at
from tests.cli.apis import ChatDriver
from tests.cli.harness import PicodeEnv
from tests.wire.server import WireServer

DEEP = '{"type": "get_state", "x": ' + "[" * 1500 + "]" * 1500 + "}"
JUST_DEEP = "[" * 300 + "]" * 300  # parses, but past the bound


def test_rpc_answers_a_deep_line_with_an_error_and_goes_on(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = ChatDriver()
    picode.add_config(api.config(wire))
    child = picode.start("--mode", "rpc", "--model", api.model)
    try:
        child.send(DEEP)
        assert "nested deeper than 200" in child.response("parse")["error"]
        child.send(JUST_DEEP)
        assert "nested deeper than 200" in child.response("parse")["error"]
        child.send({"type": "get_state", "id": "s"})
        assert child.response("get_state")["success"]
        child.close_stdin()
        assert child.wait() == 0
    finally:
        child.stop()


def test_acp_answers_a_deep_line_with_a_json_rpc_error_and_goes_on(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = point_at(wire, picode)
    child = picode.start("--mode", "acp", "--model", api.model)
    try:
        child.send(DEEP.replace('"type": "get_state"', '"jsonrpc": "2.0", "id": 1'))
        error = child.expect(lambda message: "error" in message)
        assert error["error"]["code"] == -32600
        assert "nested deeper than 200" in error["error"]["data"]["details"]
        child.send(
            {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": 1}}
        )
        assert "result" in child.expect(lambda message: message.get("id") == 2)
    finally:
        child.close_stdin()
    assert child.wait() == 0
