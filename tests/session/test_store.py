"""Session files: append-only JSONL trees, crash safety, lazy loading, listing."""

from __future__ import annotations

import errno
import json
import os
import queue
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from picode.ai.types import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    message_to_dict,
)
from picode.session.store import file as store_file_module
from picode.session.store import sessions as store_module
from picode.session.store.format import encode_cwd
from picode.session.store.sessions import (
    AmbiguousSessionError,
    SessionFile,
    SessionNotFoundError,
    SessionStore,
    SessionWriteError,
    compaction_summary_message,
    is_compaction_summary,
)


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "sessions")


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    return tmp_path / "project"


def user(text: str) -> UserMessage:
    return UserMessage(text)


def assistant(text: str, *calls: ToolCall) -> AssistantMessage:
    return AssistantMessage(
        [TextContent(text), *calls],
        api="anthropic-messages",
        provider="anthropic",
        model="claude-sonnet-4-5",
        usage=Usage(input=10, output=5, total_tokens=15),
        stop_reason="toolUse" if calls else "stop",
    )


def texts(messages: list[Message]) -> list[str]:
    return [m.text for m in messages]


def mixed_messages() -> list[Message]:
    call = ToolCall("call_1", "read", {"path": "src/ü.py", "limit": 10})
    return [
        UserMessage(
            [TextContent("look at this 🦀 नमस्ते 漢字"), ImageContent("aGVsbG8=", "image/png")]
        ),
        AssistantMessage(
            [ThinkingContent("hmm", "sig"), TextContent("reading"), call],
            api="anthropic-messages",
            provider="anthropic",
            model="claude-sonnet-4-5",
            usage=Usage(input=100, output=20, cache_read=7, total_tokens=127),
            stop_reason="toolUse",
            response_id="msg_1",
        ),
        ToolResultMessage("call_1", "read", [TextContent("line\n" * 5000)], {"lines": 5000}),
        ToolResultMessage("call_2", "bash", [TextContent("boom")], None, is_error=True),
        assistant("done"),
        UserMessage('a\u2028b\r\nc\x00d \\ " end'),
    ]


# --- writing and reading back ----------------------------------------------------------


def test_append_then_reopen_keeps_every_message(store: SessionStore, cwd: Path) -> None:
    session = store.create(cwd)
    messages = mixed_messages()
    ids = [session.append_message(m) for m in messages]
    assert len(set(ids)) == len(ids)
    assert all(len(i) == 8 and int(i, 16) >= 0 for i in ids)
    session.close()

    reopened = store.open(session.path)
    assert reopened.warnings == []
    assert reopened.id == session.id
    assert reopened.cwd == cwd
    assert reopened.leaf_id == ids[-1]
    context = reopened.build_context()
    assert [message_to_dict(m) for m in context.messages] == [message_to_dict(m) for m in messages]
    assert context.message_entry_ids == ids


def test_lines_have_fixed_key_order_and_header(store: SessionStore, cwd: Path) -> None:
    session = store.create(cwd)
    first = session.append_message(user("hi"))
    second = session.append_model_change("openai", "gpt-5")
    lines = session.path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    assert list(header) == ["type", "version", "id", "timestamp", "cwd"]
    assert header["type"] == "session"
    assert header["version"] == 1
    assert header["cwd"] == str(cwd)
    assert session.path.parent.name == "--" + str(cwd).strip("/").replace("/", "-") + "--"
    assert session.path.name.endswith(f"_{session.id}.jsonl")
    for line, (kind, entry_id, parent) in zip(
        lines[1:], [("message", first, None), ("model_change", second, first)], strict=True
    ):
        obj = json.loads(line)
        assert list(obj)[:4] == ["type", "id", "parent_id", "timestamp"]
        assert (obj["type"], obj["id"], obj["parent_id"]) == (kind, entry_id, parent)


def test_file_appears_with_first_message(store: SessionStore, cwd: Path) -> None:
    session = store.create(cwd)
    session.append_model_change("anthropic", "claude-sonnet-4-5")
    session.append_thinking_level_change("high")
    assert not session.persisted
    assert not session.path.exists()
    assert session.build_context().model == ("anthropic", "claude-sonnet-4-5")
    session.append_message(user("first"))
    assert session.persisted
    reopened = store.open(session.path)
    context = reopened.build_context()
    assert (context.model, context.thinking) == (("anthropic", "claude-sonnet-4-5"), "high")
    assert texts(context.messages) == ["first"]
    if os.name == "posix":
        assert stat.S_IMODE(session.path.stat().st_mode) == 0o600


CHILD = """
import sys
from pathlib import Path
from typing import Any
from picode.ai.types import UserMessage
from picode.session.store.sessions import SessionStore
session = SessionStore(Path(sys.argv[1])).create(Path(sys.argv[2]))
i = 0
while True:
    session.append_message(UserMessage(f"message {i} " + "x" * (i % 7 * 20000)))
    print("appended", i, session.path, flush=True)
    i += 1
"""


def test_kill_9_while_appending_loses_no_completed_message(store: SessionStore, cwd: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(store.sessions_dir), str(cwd)],
        stdout=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert child.stdout is not None
    reader = threading.Thread(target=lambda: [lines.put(x) for x in child.stdout], daemon=True)  # type: ignore[union-attr]
    reader.start()
    reported = -1
    path = ""
    try:
        while reported < 60:
            _, number, path = lines.get(timeout=60).split(" ", 2)
            reported = int(number)
        child.kill()
    finally:
        child.kill()
        child.wait(timeout=30)
    reader.join(timeout=30)
    while not lines.empty():
        _, number, path = lines.get().split(" ", 2)
        reported = int(number)

    session = store.open(Path(path.strip()))
    got = texts(session.build_context().messages)
    assert len(got) >= reported + 1
    assert [t.split(" ")[1] for t in got] == [str(i) for i in range(len(got))]
    assert all(t == f"message {i} " + "x" * (i % 7 * 20000) for i, t in enumerate(got))
    assert all("not valid JSON" not in w for w in session.warnings)

    # What a kill in the middle of a write would leave behind: a torn last line.
    with open(session.path, "ab") as handle:
        handle.write(b'{"type":"message","id":"deadbeef","parent_id":"' + b"x" * 100)
    torn = store.open(session.path)
    assert len(torn.build_context().messages) == len(got)
    line_count = len(got) + 2
    assert any(f"line {line_count}" in w and "incomplete" in w for w in torn.warnings)
    # Appending after a torn line starts a fresh line, so nothing written later is lost.
    torn.append_message(user("after the crash"))
    again = store.open(session.path)
    assert texts(again.build_context().messages) == [*got, "after the crash"]
    assert any(f"line {line_count}" in w for w in again.warnings)


def test_corrupt_middle_line_is_skipped_with_warning(store: SessionStore, cwd: Path) -> None:
    session = store.create(cwd)
    for text in ["one", "two", "three", "four"]:
        session.append_message(user(text))
    lines = session.path.read_bytes().split(b"\n")
    lines[2] = b'{"type":"message","id":' + b"\xff garbage"  # "two" is on line 3
    session.path.write_bytes(b"\n".join(lines))
    reopened = store.open(session.path)
    assert texts(reopened.build_context().messages) == ["one", "three", "four"]
    assert len(reopened.warnings) == 2
    assert "line 3" in reopened.warnings[0]
    assert "not valid JSON" in reopened.warnings[0]
    assert "line 4" in reopened.warnings[1]  # "three" lost its parent and was re-attached


def test_corrupt_json_behind_a_valid_prefix_is_skipped_lazily(
    store: SessionStore, cwd: Path
) -> None:
    session = store.create(cwd)
    for text in ["one", "two", "three"]:
        session.append_message(user(text))
    lines = session.path.read_text(encoding="utf-8").split("\n")
    lines[2] = lines[2].replace('"role":"user"', '"role":"user",,')
    session.path.write_text("\n".join(lines), encoding="utf-8")
    reopened = store.open(session.path)
    assert texts(reopened.build_context().messages) == ["one", "three"]
    assert any("line 3" in w for w in reopened.warnings)


def test_file_without_header_still_opens(store: SessionStore, cwd: Path) -> None:
    session = store.create(cwd)
    session.append_message(user("one"))
    session.append_message(user("two"))
    lines = session.path.read_text(encoding="utf-8").split("\n")
    session.path.write_text("\n".join(lines[1:]), encoding="utf-8")
    reopened = store.open(session.path)
    assert reopened.id == session.id
    assert texts(reopened.build_context().messages) == ["one", "two"]
    assert "no session header" in reopened.warnings[0]


def test_open_missing_file_is_a_clear_error(store: SessionStore, tmp_path: Path) -> None:
    with pytest.raises(SessionNotFoundError, match="does not exist"):
        store.open(tmp_path / "nope.jsonl")


# --- finding sessions ------------------------------------------------------------------


def test_continue_latest_is_per_cwd(store: SessionStore, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    made: dict[str, SessionFile] = {}
    for index, (name, folder) in enumerate([("a1", a), ("b1", b), ("a2", a), ("b2", b)]):
        session = store.create(folder)
        session.append_message(user(name))
        os.utime(session.path, ns=(10**18 + index * 10**9, 10**18 + index * 10**9))
        made[name] = session
    os.utime(made["a1"].path, ns=(2 * 10**18, 2 * 10**18))  # a1 was written to last
    latest_a = store.continue_latest(a)
    latest_b = store.continue_latest(b)
    assert latest_a is not None
    assert latest_b is not None
    assert latest_a.id == made["a1"].id
    assert latest_b.id == made["b2"].id
    assert store.continue_latest(tmp_path / "c") is None


def fixed_ids(monkeypatch: pytest.MonkeyPatch, ids: list[str]) -> None:
    pending = iter(ids)
    monkeypatch.setattr(store_module, "new_session_id", lambda: next(pending))


def test_resume_by_prefix(store: SessionStore, tmp_path: Path, monkeypatch) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    fixed_ids(monkeypatch, ["abc111", "abc222", "abd333", "ffe444"])
    for folder in (here, here, here, there):
        store.create(folder).append_message(user(str(folder)))

    assert store.resume("abd", here).id == "abd333"
    assert store.resume("ffe").id == "ffe444"
    assert store.resume("ffe", here).id == "ffe444"  # not in this cwd: all folders
    assert store.resume("abc111").id == "abc111"
    with pytest.raises(AmbiguousSessionError) as caught:
        store.resume("abc", here)
    message = str(caught.value)
    assert "abc111" in message
    assert "abc222" in message
    assert "abd333" not in message
    assert sorted(p.name.split("_")[1] for p in caught.value.candidates) == [
        "abc111.jsonl",
        "abc222.jsonl",
    ]
    with pytest.raises(SessionNotFoundError, match="zzz"):
        store.resume("zzz", here)
    with pytest.raises(SessionNotFoundError):
        store.resume("  ")


def test_resume_prefers_this_cwd(store: SessionStore, tmp_path: Path, monkeypatch) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    fixed_ids(monkeypatch, ["aa01", "aa02"])
    store.create(there).append_message(user("there"))
    store.create(here).append_message(user("here"))
    assert store.resume("aa", here).id == "aa02"
    assert store.resume("aa", there).id == "aa01"
    with pytest.raises(AmbiguousSessionError):
        store.resume("aa")


def test_resume_by_path(store: SessionStore, cwd: Path) -> None:
    session = store.create(cwd)
    session.append_message(user("x"))
    assert store.resume(str(session.path)).id == session.id


def test_list_1000_sessions(store: SessionStore, tmp_path: Path) -> None:
    folders = [tmp_path / "alpha", tmp_path / "beta"]
    expected = {}
    base = 1_700_000_000 * 10**9
    for index in range(1000):
        folder = folders[index % 2]
        session = store.create(folder)
        count = index % 4 + 1
        for n in range(count):
            message = user(f"task {index}\n  details") if n == 0 else assistant(f"r{n}")
            session.append_message(message)
        if index % 10 == 0:
            session.append_session_info(f"name {index}")
        session.close()
        mtime = base + ((index * 7919) % 1000) * 10**9  # shuffled, all distinct
        os.utime(session.path, ns=(mtime, mtime))
        expected[session.id] = (index, folder, count, mtime // 10**6, session)

    for attempt in range(2):  # cold, then from the index
        listed = store.list()
        assert len(listed) == 1000, attempt
        assert [s.modified for s in listed] == sorted((s.modified for s in listed), reverse=True)
        for summary in listed:
            index, folder, count, modified, session = expected[summary.id]
            assert summary.path == session.path
            assert summary.cwd == folder
            assert summary.created == session.header["timestamp"]
            assert summary.modified == modified
            assert summary.message_count == count
            assert summary.first_message == f"task {index} details"
            assert summary.name == (f"name {index}" if index % 10 == 0 else None)
            assert summary.size_bytes == session.path.stat().st_size

    alpha = store.list(folders[0])
    assert len(alpha) == 500
    assert {s.cwd for s in alpha} == {folders[0]}


def test_list_sees_appends_renames_and_deletions(store: SessionStore, cwd: Path) -> None:
    first = store.create(cwd)
    first.append_message(assistant("no user yet"))
    second = store.create(cwd)
    second.append_message(user("hello"))
    by_id = {s.id: s for s in store.list(cwd)}
    summary_1, summary_2 = by_id[first.id], by_id[second.id]
    assert (summary_1.first_message, summary_1.message_count) == (None, 1)
    assert (summary_2.first_message, summary_2.message_count) == ("hello", 1)

    first.append_message(user("later question"))
    first.append_session_info("renamed")
    first.append_message(assistant("answer"))
    second.path.unlink()
    (summary,) = store.list(cwd)
    assert summary.id == first.id
    assert summary.first_message == "later question"
    assert summary.message_count == 3
    assert summary.name == "renamed"
    assert summary.size_bytes == first.path.stat().st_size
    assert store.list(cwd.parent / "elsewhere") == []


def test_the_first_message_shows_what_was_typed_and_attached_files_by_name(
    store: SessionStore, cwd: Path
) -> None:
    from picode.agent.file_blocks import text_file_block
    from picode.ai.types import TextContent, UserMessage

    session = store.create(cwd)
    attached = text_file_block("holdout.txt", 2, None, "secret line one\nsecret line two")
    session.append_message(UserMessage([TextContent("review this"), attached]))
    (summary,) = store.list(cwd)
    assert summary.first_message == "review this @holdout.txt"
    # Named in the text already (``@path`` typed): not named twice.
    typed = store.create(cwd.parent / "typed")
    typed.append_message(UserMessage([TextContent("look at @holdout.txt first"), attached]))
    (named,) = store.list(cwd.parent / "typed")
    assert named.first_message == "look at @holdout.txt first"


def test_list_ignores_a_torn_last_line(store: SessionStore, cwd: Path) -> None:
    session = store.create(cwd)
    session.append_message(user("one"))
    with open(session.path, "ab") as handle:
        handle.write(b'{"type":"message","id":"0000')
    (summary,) = store.list(cwd)
    assert summary.message_count == 1
    reopened = store.open(session.path)
    reopened.append_message(user("two"))
    reopened.append_message(user("three"))
    (summary,) = store.list(cwd)
    assert summary.message_count == 3
    assert summary.size_bytes == session.path.stat().st_size


# --- the tree --------------------------------------------------------------------------


def test_branch_to_and_build_context_follow_the_branch(store: SessionStore, cwd: Path) -> None:
    session = store.create(cwd)
    q1 = session.append_message(user("q1"))
    session.append_message(assistant("a1"))
    session.append_model_change("openai", "gpt-5")
    session.append_message(user("q2"))
    session.append_message(assistant("a2"))

    session.branch_to(q1)
    session.append_thinking_level_change("low")
    session.append_message(user("q2 again"))
    alt_leaf = session.append_message(assistant("a2 again"))
    context = session.build_context()
    assert texts(context.messages) == ["q1", "q2 again", "a2 again"]
    assert context.model is None
    assert context.thinking == "low"

    reopened = store.open(session.path)
    assert reopened.leaf_id == alt_leaf
    assert texts(reopened.build_context().messages) == ["q1", "q2 again", "a2 again"]
    reopened.branch_to(session.entry_ids()[4])  # a2
    other = reopened.build_context()
    assert texts(other.messages) == ["q1", "a1", "q2", "a2"]
    assert (other.model, other.thinking) == (("openai", "gpt-5"), None)
    assert [e.type for e in reopened.branch()] == ["message"] * 2 + ["model_change"] + [
        "message"
    ] * 2
    assert len(reopened.entries()) == 8
    with pytest.raises(ValueError, match="no entry"):
        reopened.branch_to("nothere")


def test_fork_copies_the_branch_up_to_entry(store: SessionStore, cwd: Path) -> None:
    session = store.create(cwd)
    q1 = session.append_message(user("q1"))
    a1 = session.append_message(assistant("a1"))
    session.append_message(user("q2"))
    session.branch_to(q1)
    session.append_message(assistant("other a1"))
    forked = store.fork(session, a1)
    assert forked.path != session.path
    assert forked.header["parent_session"] == session.id
    assert forked.id != session.id
    assert forked.entry_ids() == [q1, a1]
    assert forked.leaf_id == a1
    assert texts(forked.build_context().messages) == ["q1", "a1"]
    forked.append_message(user("in the fork"))

    reopened = store.open(forked.path)
    assert reopened.warnings == []
    assert texts(reopened.build_context().messages) == ["q1", "a1", "in the fork"]
    assert reopened.parent_session == session.id
    assert len(store.open(session.path).entries()) == 4
    with pytest.raises(ValueError, match="no entry"):
        store.fork(session, "missing!")


def test_compaction_context_is_summary_plus_kept_tail(store: SessionStore, cwd: Path) -> None:
    session = store.create(cwd)
    ids = []
    for n in range(5):
        ids.append(session.append_message(user(f"q{n}")))
        ids.append(session.append_message(assistant(f"a{n}")))
    session.append_compaction(
        "they talked about q0-q2",
        ids[6],
        tokens_before=12345,
        details={"read_files": ["a.py"], "modified_files": ["b.py"]},
    )
    after = session.append_message(user("q5"))

    for source in (session, store.open(session.path)):
        context = source.build_context()
        assert is_compaction_summary(context.messages[0])
        assert "they talked about q0-q2" in context.messages[0].text
        assert texts(context.messages[1:]) == ["q3", "a3", "q4", "a4", "q5"]
        assert context.message_entry_ids == [None, *ids[6:], after]
        display = context.display_messages
        assert len(display) == 11
        assert texts(display.tail(2)) == ["a4", "q5"]
        assert texts(context.tail(3)) == ["q4", "a4", "q5"]
        assert texts(display.range(0, 2)) == ["q0", "a0"]
        assert texts(list(display))[:3] == ["q0", "a0", "q1"]

    (compaction,) = [e for e in session.entries() if e.type == "compaction"]
    assert compaction.data["details"] == {"read_files": ["a.py"], "modified_files": ["b.py"]}
    assert compaction.data["tokens_before"] == 12345


def test_resume_parses_only_what_the_context_needs(store: SessionStore, cwd: Path) -> None:
    session = store.create(cwd)
    ids = [session.append_message(user(f"m{n}")) for n in range(8)]
    session.append_compaction("summary", ids[5], 1, {})
    # Damage an old message behind an intact prefix: only a full parse can notice.
    lines = session.path.read_text(encoding="utf-8").split("\n")
    lines[2] = lines[2].replace('"content":"m1"', '"content":m1')
    session.path.write_text("\n".join(lines), encoding="utf-8")

    reopened = store.open(session.path)
    context = reopened.build_context()
    assert texts(context.messages[1:]) == ["m5", "m6", "m7"]
    assert texts(reopened.branch_messages().tail(3)) == ["m5", "m6", "m7"]
    assert reopened.warnings == []  # the damaged line was never read
    assert texts(context.display_messages.range(0, 3)) == ["m0", "m2"]
    assert len(reopened.warnings) == 1
    assert "line 3" in reopened.warnings[0]


def test_latest_compaction_on_the_branch_wins(store: SessionStore, cwd: Path) -> None:
    session = store.create(cwd)
    ids = [session.append_message(user(f"m{n}")) for n in range(6)]
    session.append_compaction("first", ids[2], 1, {})
    ids.append(session.append_message(user("m6")))
    session.append_compaction("second", ids[5], 1, {})
    context = store.open(session.path).build_context()
    assert context.messages[0].text.endswith("second\n</summary>")
    assert texts(context.messages[1:]) == ["m5", "m6"]


def test_model_thinking_and_fired_rules_restored(store: SessionStore, cwd: Path) -> None:
    session = store.create(cwd)
    session.append_model_change("anthropic", "claude-sonnet-4-5")
    session.append_thinking_level_change("medium")
    session.append_message(user("hi"))
    session.append_custom("ttsr_fired", {"rule": "no-print"})
    session.append_custom("other", {"rule": "not-a-rule"})
    session.append_model_change("google", "gemini-2.5-pro")
    session.append_custom("ttsr_fired", {"rule": "tests-first"})
    session.append_custom("ttsr_fired", {"rule": "no-print"})
    session.append_thinking_level_change("xhigh")
    context = store.open(session.path).build_context()
    assert context.model == ("google", "gemini-2.5-pro")
    assert context.thinking == "xhigh"
    assert context.fired_rules == ["no-print", "tests-first"]


def test_labels_and_name(store: SessionStore, cwd: Path) -> None:
    session = store.create(cwd)
    first = session.append_message(user("q"))
    second = session.append_message(assistant("a"))
    assert session.name is None
    session.append_session_info("draft")
    session.append_label(first, "start")
    session.append_label(second, "answer")
    session.append_label(second, "")
    session.append_session_info("final")
    reopened = store.open(session.path)
    assert reopened.name == "final"
    assert reopened.labels() == {first: "start"}


def test_compaction_summary_message_round_trip() -> None:
    message = compaction_summary_message("the gist")
    assert is_compaction_summary(message)
    assert message.text.startswith(
        "The conversation history before this point was compacted into the following summary:"
    )
    assert "<summary>\nthe gist\n</summary>" in message.text
    assert not is_compaction_summary(user("the gist"))
    assert not is_compaction_summary(assistant("<summary>\nx\n</summary>"))


# --- secrets ---------------------------------------------------------------------------

SECRETS = [
    "sk-ant-api03-" + "A1b2C3d4" * 10,
    "sk-proj-" + "Zy9_" * 12,
    "sk-" + "0aB1cD2eF3gH4iJ5kL6mN7oP8",
    "AIza" + "SyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",
]


@pytest.mark.parametrize("secret", SECRETS)
def test_api_key_shapes_are_redacted(store: SessionStore, cwd: Path, secret: str) -> None:
    session = store.create(cwd)
    call = ToolCall("c1", "bash", {"command": f"curl -H 'x-api-key: {secret}' url"})
    session.append_message(user(f"my key is {secret}."))
    session.append_message(assistant("ok", call))
    session.append_custom("ext", {"token": secret})
    raw = session.path.read_text(encoding="utf-8")
    assert secret not in raw
    assert raw.count("[redacted]") == 3
    assert len([w for w in session.warnings if "redacted" in w]) == 3
    context = store.open(session.path).build_context()
    assert context.messages[0].text == "my key is [redacted]."


def test_ordinary_text_is_not_redacted(store: SessionStore, cwd: Path) -> None:
    harmless = (
        "task-scheduler-implementation-details disk-usage-report-for-all-volumes "
        "sk-learn-model-selection-crossval AIzaShort sk-ant "
        "iVBOR+AIza" + "B" * 60 + "/xyz"
    )
    session = store.create(cwd)
    session.append_message(user(harmless))
    assert harmless in session.path.read_text(encoding="utf-8")
    assert session.warnings == []


def test_cwd_folder_names_are_flat_and_bounded() -> None:
    assert encode_cwd(Path("/home/me/proj")) == "--home-me-proj--"
    assert encode_cwd(Path("C:\\Users\\me")) == "--C--Users-me--"
    long_a = encode_cwd(Path("/x" * 200 + "/a"))
    long_b = encode_cwd(Path("/x" * 200 + "/b"))
    assert long_a != long_b
    assert len(long_a.encode()) <= 150
    assert "/" not in encode_cwd(Path("/a/b:c*d?e"))


def test_new_session_lines_are_numbered_from_the_header(store: SessionStore, cwd: Path) -> None:
    session = store.create(cwd)
    session.append_model_change("anthropic", "claude-sonnet-4-5")
    session.append_message(user("hi"))
    lines = session.path.read_text(encoding="utf-8").split("\n")
    lines[1] = lines[1].replace('"provider"', '"provider":,')
    session.path.write_text("\n".join(lines), encoding="utf-8")
    context = store.open(session.path).build_context()
    assert texts(context.messages) == ["hi"]
    assert context.model is None


class FakeFullDiskOs:
    """``os`` whose disk fills up: a short write, then ENOSPC."""

    def __init__(self) -> None:
        self.calls = 0

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)

    def write(self, fd: int, data: bytes) -> int:
        self.calls += 1
        if self.calls > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return os.write(fd, bytes(data[: len(data) // 2]))


def test_failed_write_is_a_clear_error_and_changes_nothing(
    store: SessionStore, cwd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = store.create(cwd)
    first = session.append_message(user("kept"))
    with monkeypatch.context() as patch:
        patch.setattr(store_file_module, "os", FakeFullDiskOs())
        with pytest.raises(SessionWriteError, match="No space left on device"):
            session.append_message(user("lost " * 100))
    assert session.leaf_id == first
    assert session.entry_ids() == [first]
    retried = session.append_message(user("retried"))
    reopened = store.open(session.path)
    assert texts(reopened.build_context().messages) == ["kept", "retried"]
    assert reopened.parent_of(retried) == first
    assert any("line 3" in w for w in reopened.warnings)  # the torn half line


def test_messages_load_in_batches_in_order_skipping_bad_lines(
    store: SessionStore, cwd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_file_module, "LOAD_BATCH", 3)
    session = store.create(cwd)
    words = [f"message {n}" for n in range(11)]
    for text in words:
        session.append_message(user(text))
    session.close()
    lines = session.path.read_text(encoding="utf-8").split("\n")
    lines[5] = lines[5].replace('"role":"user"', '"role":"user",,')  # "message 4"
    session.path.write_text("\n".join(lines), encoding="utf-8")
    batches: list[int] = []
    parse = store_file_module.SessionFile._parse_entries

    def counting(self: store_file_module.SessionFile, ids: list[str]) -> Any:
        batches.append(len(ids))
        return parse(self, ids)

    monkeypatch.setattr(store_file_module.SessionFile, "_parse_entries", counting)
    reopened = store.open(session.path)
    assert texts(reopened.build_context().messages) == words[:4] + words[5:]
    assert max(batches) <= 3 and sum(batches) >= 11
    assert any("line 6" in w for w in reopened.warnings)
