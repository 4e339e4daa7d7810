"""The reply being streamed is kept beside the session file until it ends, so that a picode
that stops mid-reply (a crash, ``kill -9``) loses at most a second of it."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from picode.ai.providers.faux import FauxText, FauxThinking, FauxToolCall, FauxTurn, text_turn
from picode.ai.types import (
    AssistantMessage,
    TextContent,
    ToolCall,
    UserMessage,
    message_to_dict,
)
from picode.session.store import RECOVERED_TEXT
from picode.session.store.draft import DRAFT_SUFFIX, ReplyDraft, draft_path, recover_draft
from picode.session.store.file import SessionFile
from tests.session.conftest import SessionHarness, run, wait_until


def _text_if_any(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def _draft_of(path: Path) -> dict[str, object]:
    loaded: dict[str, object] = json.loads(draft_path(path).read_text())
    return loaded


def test_a_streaming_reply_has_a_draft_until_it_ends(
    harness: SessionHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("picode.session.store.draft.DRAFT_INTERVAL_S", 0.01)
    key = "sk-ant-api03-" + "k" * 40

    async def scenario() -> None:
        hanging = FauxTurn([FauxText(f"Half of the answer, with {key}")], hang=True)
        session = await harness.open(harness.faux(text_turn("first"), hanging, text_turn("ok")))
        await session.prompt("one")
        path = session.session_file_path
        assert path is not None and not draft_path(path).exists()  # a finished reply: none
        running = asyncio.ensure_future(session.prompt("two"))
        await wait_until(lambda: draft_path(path).exists(), what="the draft")
        await wait_until(lambda: "Half of the answer" in _text_if_any(draft_path(path)))
        text = draft_path(path).read_text()
        assert key not in text and "[redacted]" in text  # masked as every entry is
        assert draft_path(path).stat().st_mode & 0o777 == 0o600
        session.abort()
        await running
        # Ended (aborted), written to the file: the draft is gone.
        assert not draft_path(path).exists()
        await session.prompt("three")
        assert not draft_path(path).exists()
        await session.close()

    run(scenario())


def test_a_draft_left_behind_is_kept_as_a_reply_cut_short(
    harness: SessionHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk as a picode killed mid-reply leaves it: opened again, the reply is there,
    its text and thinking but not the tool call it had begun, and the model sees it."""
    monkeypatch.setattr("picode.session.store.draft.DRAFT_INTERVAL_S", 0.01)
    crashed = harness.root / "crashed.jsonl"

    async def scenario() -> None:
        hanging = FauxTurn(
            [
                FauxThinking("Let me think."),
                FauxText("The answer so far"),
                FauxToolCall("read", {"path": "x"}),
            ],
            hang=True,
        )
        session = await harness.open(harness.faux(hanging))
        running = asyncio.ensure_future(session.prompt("question"))
        await wait_until(lambda: session.session_file_path is not None, what="the file")
        path = session.session_file_path
        assert path is not None
        await wait_until(lambda: '"read"' in _text_if_any(draft_path(path)), what="the call")
        # What the disk holds at this instant, as a kill -9 would leave it.
        shutil.copy(path, crashed)
        shutil.copy(draft_path(path), draft_path(crashed))
        session.abort()
        await running
        await session.close()

        faux = harness.faux(text_turn("carried on"))
        resumed = await harness.open(faux, session=crashed)
        assert not draft_path(crashed).exists()
        [question, reply] = resumed.messages
        assert isinstance(question, UserMessage) and isinstance(reply, AssistantMessage)
        assert reply.text == "The answer so far" and reply.tool_calls == []
        assert [block.type for block in reply.content] == ["thinking", "text"]
        assert reply.stop_reason == "aborted" and reply.error_message == RECOVERED_TEXT
        await resumed.prompt("go on")
        sent = faux.requests[0].messages
        assert any(m.text == "The answer so far" for m in sent if isinstance(m, AssistantMessage))
        await resumed.close()

        # Once kept, it is an entry like any other: opening again adds nothing.
        again = await harness.open(harness.faux(), session=crashed)
        assert [m.text for m in again.messages][:2] == ["question", "The answer so far"]
        assert len([m for m in again.messages if m.text == "The answer so far"]) == 1
        await again.close()

    run(scenario())


def _file_with_a_question(folder: Path) -> SessionFile:
    folder.mkdir(exist_ok=True)
    file = SessionFile.new(folder / "s.jsonl", "s", folder)
    file.append_message(UserMessage("question"))
    return file


def _write_draft(file: SessionFile, message: AssistantMessage, after: str | None) -> None:
    payload = {"after": after, "message": message_to_dict(message)}
    draft_path(file.path).write_text(json.dumps(payload))


def _reply(*blocks: object) -> AssistantMessage:
    return AssistantMessage(list(blocks), api="x", provider="x", model="x")  # type: ignore[arg-type]


def test_a_draft_is_kept_only_where_it_was_written(tmp_path: Path) -> None:
    file = _file_with_a_question(tmp_path)
    question = file.leaf_id
    # Bookkeeping written after the draft (a checkpoint's mark) does not make it stale.
    file.append_custom("checkpoint", {"message_id": question})
    _write_draft(file, _reply(TextContent("kept")), question)
    kept = recover_draft(file)
    assert kept is not None and kept.text == "kept"
    assert file.entry_type(file.leaf_id or "") == "message"
    file = _file_with_a_question(tmp_path / "other")
    question = file.leaf_id
    # Something was written after it (a later run went on): the draft is stale.
    file.append_message(UserMessage("later"))
    _write_draft(file, _reply(TextContent("stale")), question)
    assert recover_draft(file) is None
    assert not draft_path(file.path).exists()
    assert file.leaf_id != question and len(file.branch_ids()) == 2

    # Only a tool call begun, or nothing said: nothing to keep.
    _write_draft(file, _reply(ToolCall("call_1", "read", {"path": "x"})), file.leaf_id)
    assert recover_draft(file) is None and not draft_path(file.path).exists()
    _write_draft(file, _reply(TextContent("  ")), file.leaf_id)
    assert recover_draft(file) is None

    # Unreadable: removed, the session opens as it was.
    draft_path(file.path).write_text('{"after": "x", "message": ')
    assert recover_draft(file) is None and not draft_path(file.path).exists()
    assert len(file.branch_ids()) == 2
    # A write cut short leaves only its temporary file: that goes too.
    cut_short = draft_path(file.path).with_name("s.jsonl.draft.tmp")
    cut_short.write_text('{"after": ')
    assert recover_draft(file) is None and not cut_short.exists()


def test_the_draft_is_written_an_interval_after_the_reply_began_and_again_while_it_stalls(
    tmp_path: Path,
) -> None:
    file = _file_with_a_question(tmp_path)
    path = draft_path(file.path)
    assert path.name == "s.jsonl" + DRAFT_SUFFIX

    async def scenario() -> None:
        draft = ReplyDraft(interval=0.05)
        reply = _reply(TextContent("a"))
        draft.update(file, reply)
        assert not path.exists()  # nothing on the deltas' path: the timer writes
        await wait_until(path.exists, what="the first write")
        assert _draft_of(file.path)["after"] == file.leaf_id
        # No delta since (a stall): the latest state is still written.
        reply.content = [TextContent("abc")]
        await wait_until(lambda: "abc" in _text_if_any(path), what="the stalled state")
        draft.discard()
        assert not path.exists() and draft._timer is None  # nothing left to write later
        # A reply that ends within the interval leaves no file at all.
        draft.update(file, _reply(TextContent("quick")))
        draft.discard()
        assert not path.exists() and draft._timer is None
        # A file not on disk yet (no message written) gets no draft beside it.
        unwritten = SessionFile.new(tmp_path / "new.jsonl", "n", tmp_path)
        fresh = ReplyDraft(interval=0.01)
        fresh.update(unwritten, _reply(TextContent("x")))
        first = fresh._timer
        await wait_until(lambda: fresh._timer is not first, what="the timer's turn")
        assert not draft_path(unwritten.path).exists()
        fresh.discard()

    run(scenario())
