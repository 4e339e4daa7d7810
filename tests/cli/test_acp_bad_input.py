"""``picode --mode acp`` fed lines no ACP client should send: each gets a JSON-RPC error and
the process keeps serving, with the session file intact."""

from __future__ import annotations

import json
from typing import Any

from picode.ai.types import UserMessage
from picode.session.store import SessionStore
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


def test_nothing_is_served_before_initialize_and_unknown_things_are_said_plainly(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = point_at(wire, picode)
    child = picode.start("--mode", "acp", "--model", api.model)
    try:
        early = request(child, 1, "session/new", {"cwd": str(picode.project), "mcpServers": []})
        assert early["error"]["code"] == -32600
        assert "initialize first" in early["error"]["data"]["message"]
        assert "result" in request(child, 2, "initialize", {"protocolVersion": 1})
        # A notification picode does not know: one line on stderr, no traceback.
        child.send({"jsonrpc": "2.0", "method": "session/wiggle", "params": {}})
        bogus = request(child, 3, "authenticate", {"methodId": "no-such-method"})
        assert bogus["error"]["code"] == -32602
        assert "unknown auth method" in bogus["error"]["data"]["message"]
        created = request(child, 4, "session/new", {"cwd": str(picode.project), "mcpServers": []})
        assert "result" in created
    finally:
        child.close_stdin()
    assert child.wait() == 0
    assert "Traceback" not in child.stderr()
    assert "session/wiggle" in child.stderr()


def test_session_list_pages_the_saved_sessions_newest_first(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = point_at(wire, picode)
    wire.enqueue(api.text("One."), api.text("Two."))
    child = picode.start("--mode", "acp", "--model", api.model)
    try:
        initialized = request(child, 1, "initialize", {"protocolVersion": 1})
        assert initialized["result"]["agentCapabilities"]["sessionCapabilities"]["list"] == {}
        ids = []
        for n, text in enumerate(("first question", "second question"), start=2):
            made = request(
                child, n * 10, "session/new", {"cwd": str(picode.project), "mcpServers": []}
            )
            ids.append(made["result"]["sessionId"])
            prompt = {"sessionId": ids[-1], "prompt": [{"type": "text", "text": text}]}
            assert "result" in request(child, n * 10 + 1, "session/prompt", prompt)
        # A subagent's transcript, the newest file: not a session to offer.
        transcript = SessionStore(picode.home / "data" / "sessions").create(
            picode.project, subagent_of=ids[0]
        )
        transcript.append_message(UserMessage("a task's prompt"))
        transcript.close()
        listed = request(child, 50, "session/list", {"cwd": str(picode.project)})["result"]
        assert [s["sessionId"] for s in listed["sessions"]] == list(reversed(ids))
        assert listed["sessions"][0]["title"] == "second question"
        assert listed["sessions"][0]["updatedAt"].endswith("Z")
        assert "nextCursor" not in listed
        bad = request(child, 51, "session/list", {"cursor": "zz"})
        assert bad["error"]["code"] == -32602
    finally:
        child.close_stdin()
    assert child.wait() == 0
