"""``picode --mode acp`` fed lines no ACP client should send: each gets a JSON-RPC error and
the process keeps serving, with the session file intact."""

from __future__ import annotations

import json
from typing import Any

from tests.cli.acp_client import point_at
from tests.cli.harness import Child, PicodeEnv
from tests.wire.server import WireServer


def request(child: Child, request_id: int, method: str, params: Any) -> dict[str, Any]:
    child.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    return child.expect(lambda message: message.get("id") == request_id and "method" not in message)


def test_bad_lines_are_answered_and_the_session_goes_on(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = point_at(wire, picode)
    wire.enqueue(api.text("First."), api.text("Second."))
    child = picode.start("--mode", "acp", "--model", api.model)
    try:
        assert "result" in request(child, 1, "initialize", {"protocolVersion": 1})
        created = request(child, 2, "session/new", {"cwd": str(picode.project), "mcpServers": []})
        session_id = created["result"]["sessionId"]
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "one"}]}
        assert request(child, 3, "session/prompt", prompt)["result"]["stopReason"] == "end_turn"

        child.send("this is not json")
        parse = child.expect(lambda message: "error" in message)
        assert (parse["id"], parse["error"]["code"]) == (None, -32700)
        child.send("[1, 2]")
        batch = child.expect(lambda message: "error" in message)
        assert batch["error"]["code"] == -32600
        assert "batches" in batch["error"]["data"]["details"]
        child.send({"jsonrpc": "2.0", "id": 4, "method": 42})
        assert child.expect(lambda message: message.get("id") == 4)["error"]["code"] == -32600
        assert request(child, 5, "session/teleport", {})["error"]["code"] == -32601
        missing = request(child, 6, "session/prompt", {"sessionId": "nope", "prompt": []})
        assert missing["error"]["code"] == -32602
        assert "unknown session 'nope'" in missing["error"]["data"]["message"]
        assert request(child, 7, "session/prompt", {"sessionId": session_id})["error"]["code"] == (
            -32602
        )
        audio = {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}
        refused = request(child, 8, "session/prompt", {"sessionId": session_id, "prompt": [audio]})
        assert "cannot take 'audio'" in refused["error"]["data"]["message"]

        prompt["prompt"] = [{"type": "text", "text": "two"}]
        assert request(child, 9, "session/prompt", prompt)["result"]["stopReason"] == "end_turn"
    finally:
        child.close_stdin()
    assert child.wait() == 0
    messages = [entry for entry in picode.session_entries() if entry.get("type") == "message"]
    texts = [json.dumps(entry["message"]["content"]) for entry in messages]
    expected = ["one", "First.", "two", "Second."]
    assert len(texts) == len(expected)
    assert all(word in text for word, text in zip(expected, texts, strict=True)), texts
    assert len(wire.requests) == 2, "refused prompts never reach the model"
