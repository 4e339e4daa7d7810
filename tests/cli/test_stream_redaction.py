"""A key the model writes is masked in the json/rpc and acp streams even when the throttle
cut it between two deltas (each line, each chunk alone would carry a harmless half)."""

from __future__ import annotations

import json
from typing import Any

from picode.agent.events import MessageEnd, MessageStart, MessageUpdate
from picode.ai.events import TextDeltaEvent, TextEndEvent, ThinkingDeltaEvent
from picode.ai.types import AssistantMessage, TextContent
from picode.modes.acp.updates import ReplyChunks
from picode.modes.output import LineWriter
from picode.modes.serialize import RedactedEvents
from picode.session.safety.secrets import remember_secret

KEY = "split-stream-key-0f3a9c-plain"
GHP = "ghp_" + "S7p8L9i0" * 4 + "tTeD"
REPLY = f"Your key is {KEY} and the token {GHP} — keep them safe."
CUTS = (5, 17, 23, 40, 51, 60, 70)  # inside the key, inside the token, anywhere


def _events(reply: str, *, end: bool = True) -> list[Any]:
    message = AssistantMessage(
        content=[TextContent(reply)], api="test", provider="test", model="test"
    )
    pieces = [reply[a:b] for a, b in zip((0, *CUTS), (*CUTS, len(reply)), strict=True)]
    events: list[Any] = [MessageStart(message)]
    events += [MessageUpdate(message, TextDeltaEvent(0, piece, message)) for piece in pieces]
    if end:
        events.append(MessageUpdate(message, TextEndEvent(0, reply, message)))
    events.append(MessageEnd(message))
    return events


class FakeStdout:
    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> int:
        self.data += data
        return len(data)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False  # a pipe: what a program reading the json stream sees


def _json_stream(events: list[Any]) -> list[dict[str, Any]]:
    stdout = FakeStdout()
    writer = LineWriter(stdout)  # type: ignore[arg-type]
    redacted = RedactedEvents()
    for event in events:
        for payload in redacted.dicts(event):
            writer.json(payload)
    return [json.loads(line) for line in stdout.data.decode().splitlines()]


def _streamed(lines: list[dict[str, Any]]) -> str:
    return "".join(
        line["event"]["delta"]
        for line in lines
        if line["type"] == "message_update" and line["event"]["type"] == "text_delta"
    )


def test_json_and_rpc_deltas_never_carry_a_key_cut_in_two() -> None:
    remember_secret(KEY)
    lines = _json_stream(_events(REPLY))
    raw = json.dumps(lines)
    for cut in (KEY[:8], KEY[-8:], GHP[:10], GHP[-10:]):
        assert cut not in raw
    assert _streamed(lines) == "Your key is [redacted] and the token [redacted] — keep them safe."
    # What was held comes before the block's end, as a delta of its own.
    types = [(line["type"], line.get("event", {}).get("type")) for line in lines]
    assert types[-3:] == [
        ("message_update", "text_delta"),
        ("message_update", "text_end"),
        ("message_end", None),
    ]


def test_a_reply_that_stops_without_its_block_end_still_delivers_the_rest() -> None:
    lines = _json_stream(_events(REPLY, end=False))
    assert _streamed(lines).endswith("keep them safe.")
    assert GHP not in json.dumps(lines)


def test_acp_chunks_never_carry_a_key_cut_in_two() -> None:
    remember_secret(KEY)
    chunks = ReplyChunks()
    sent = [update for event in _events(REPLY) for update in chunks.updates(event)]
    text = "".join(update.content.text for update in sent)
    assert text == "Your key is [redacted] and the token [redacted] — keep them safe."
    assert all(update.session_update == "agent_message_chunk" for update in sent)


def test_acp_thoughts_stay_thoughts() -> None:
    message = AssistantMessage(content=[], api="test", provider="test", model="test")
    chunks = ReplyChunks()
    events = [
        MessageUpdate(message, ThinkingDeltaEvent(0, "let me think ", message)),
        MessageUpdate(message, TextDeltaEvent(1, "the answer", message)),
        MessageEnd(message),
    ]
    sent = [update for event in events for update in chunks.updates(event)]
    kinds = [(update.session_update, update.content.text) for update in sent]
    assert kinds == [
        ("agent_thought_chunk", "let me think "),
        ("agent_message_chunk", "the "),  # its last word waits for the next delta or the end
        ("agent_message_chunk", "answer"),
    ]


def test_a_failed_save_is_a_notice_on_the_wire_and_its_own_type_in_the_code() -> None:
    from picode.modes.serialize import event_to_dict
    from picode.session.events import Notice, SaveFailed

    event = SaveFailed(text="Could not save the session: disk full")
    assert isinstance(event, Notice)
    assert event_to_dict(event) == {
        "type": "notice",
        "level": "error",
        "text": "Could not save the session: disk full",
        "source": "session-save",
    }
