"""/rewind, /undo and the session tree, on a real session, real tools and real git."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.ai.types import UserMessage
from picode.session.events import Notice, SessionSwitched
from picode.session.rewinding import RewindError
from picode.session.store.file import SessionFile
from tests.session.conftest import SessionHarness, run, wait_until

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need git")


BASH_CHANGES = "sed -i s/beta/BETA/ b.txt && rm c.txt && echo new > d.txt"


def _edit_and_bash() -> list[object]:
    """The model edits one file with the edit tool and changes others with bash."""
    return [
        tool_turn(
            FauxToolCall("edit", {"path": "a.txt", "old_text": "alpha", "new_text": "ALPHA"})
        ),
        tool_turn(FauxToolCall("bash", {"command": BASH_CHANGES})),
        text_turn("done"),
    ]


def _project(harness: SessionHarness) -> None:
    (harness.cwd / "a.txt").write_text("alpha\n")
    (harness.cwd / "b.txt").write_text("beta\n")
    (harness.cwd / "c.txt").write_text("gamma\n")


def _files(root: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(root.iterdir()) if p.is_file()}


def test_rewinding_code_restores_edit_and_bash_changes(harness: SessionHarness) -> None:
    _project(harness)
    before = _files(harness.cwd)

    async def scenario() -> None:
        session = await harness.open(harness.faux(text_turn("hi"), *_edit_and_bash()))
        await session.prompt("hello")
        await session.prompt("change the files")
        assert _files(harness.cwd) == {"a.txt": "ALPHA\n", "b.txt": "BETA\n", "d.txt": "new\n"}
        second = session.checkpoints()[-1]
        assert second.code and second.text == "change the files"
        plan = await session.plan_rewind(second.message_id)
        assert plan.code is not None and plan.hand_edited == []
        assert sorted(plan.code.modified) == ["a.txt", "b.txt"]
        assert plan.code.recreated == ["c.txt"] and plan.code.deleted == ["d.txt"]
        result = await session.rewind(plan, "code")
        assert result.report is not None and result.report.ok
        assert _files(harness.cwd) == before
        # Code only: the conversation still holds the turn.
        assert [m.text for m in session.messages if isinstance(m, UserMessage)] == [
            "hello",
            "change the files",
        ]
        await session.close()

    run(scenario())


def test_rewinding_the_conversation_only_leaves_files_and_keeps_the_old_branch(
    harness: SessionHarness,
) -> None:
    _project(harness)

    async def scenario() -> None:
        faux = harness.faux(text_turn("hi"), *_edit_and_bash(), text_turn("again"))
        session = await harness.open(faux)
        await session.prompt("hello")
        await session.prompt("change the files")
        changed = _files(harness.cwd)
        target = session.checkpoints()[-1]
        result = await session.rewind(await session.plan_rewind(target.message_id), "conversation")
        assert result.text == "change the files"
        assert _files(harness.cwd) == changed
        assert [m.text for m in session.messages] == ["hello", "hi"]
        assert harness.of_type(SessionSwitched)[-1].reason == "rewind"
        # The next prompt goes from the earlier point: the model sees no later message.
        await session.prompt("something else")
        assert [m.text for m in faux.last_request.messages] == ["hello", "hi", "something else"]
        path = session.session_file_path
        await session.close()
        assert path is not None
        # The abandoned branch is still in the file, and the file opens where we went on.
        file = SessionFile.load(path)
        texts = [n.text for n in _tree_of(file)]
        assert "change the files" in texts and "something else" in texts
        assert [m.text for m in file.build_context().messages][-2:] == ["something else", "again"]

    run(scenario())


def _tree_of(file: SessionFile) -> list:  # type: ignore[type-arg]
    from picode.session.store.tree import session_tree

    return session_tree(file)


def test_a_hand_edit_after_the_agent_is_detected_and_kept_unless_told(
    harness: SessionHarness,
) -> None:
    _project(harness)

    async def scenario() -> None:
        session = await harness.open(harness.faux(*_edit_and_bash()))
        await session.prompt("change the files")
        (harness.cwd / "a.txt").write_text("ALPHA and mine\n")
        plan = await session.plan_rewind(session.checkpoints()[-1].message_id)
        assert plan.hand_edited == ["a.txt"]
        result = await session.rewind(plan, "code")  # keeps hand edits by default
        assert result.report is not None and result.report.skipped == ["a.txt"]
        assert (harness.cwd / "a.txt").read_text() == "ALPHA and mine\n"
        assert (harness.cwd / "b.txt").read_text() == "beta\n"
        plan = await session.plan_rewind(session.checkpoints()[-1].message_id)
        await session.rewind(plan, "code", keep_hand_edits=False)
        assert (harness.cwd / "a.txt").read_text() == "alpha\n"
        await session.close()

    run(scenario())


def test_undo_restores_code_and_conversation_of_the_last_message(harness: SessionHarness) -> None:
    _project(harness)
    before = _files(harness.cwd)

    async def scenario() -> None:
        session = await harness.open(harness.faux(text_turn("hi"), *_edit_and_bash()))
        await session.prompt("hello")
        await session.prompt("change the files")
        result = await session.undo()
        assert result.text == "change the files"
        assert _files(harness.cwd) == before
        assert [m.text for m in session.messages] == ["hello", "hi"]
        await session.close()

    run(scenario())


def test_tree_navigation_round_trips(harness: SessionHarness) -> None:
    async def scenario() -> None:
        faux = harness.faux(text_turn("one"), text_turn("two"), text_turn("three"))
        session = await harness.open(faux)
        await session.prompt("first")
        await session.prompt("second")
        nodes = session.tree()
        assert [(n.role, n.text, n.current) for n in nodes] == [
            ("user", "first", False),
            ("assistant", "one", False),
            ("user", "second", False),
            ("assistant", "two", True),
        ]
        # Back to the first answer, a new branch, then back to the old branch's end.
        first_answer = nodes[1].entry_id
        assert await session.navigate(first_answer) == ""
        assert [m.text for m in session.messages] == ["first", "one"]
        await session.prompt("other")
        nodes = session.tree()
        assert [n.text for n in nodes if n.parent_id == first_answer] == ["second", "other"]
        assert [n.depth for n in nodes] == [0, 0, 1, 1, 1, 1]
        old_end = next(n for n in nodes if n.text == "two")
        await session.navigate(old_end.entry_id)
        assert [m.text for m in session.messages] == ["first", "one", "second", "two"]
        assert next(n for n in session.tree() if n.current).text == "two"
        # A person's message: the conversation goes on from before it, its text comes back.
        second = next(n for n in session.tree() if n.text == "second")
        assert await session.navigate(second.entry_id) == "second"
        assert [m.text for m in session.messages] == ["first", "one"]
        session.set_label(first_answer, "good point")
        assert next(n for n in session.tree() if n.entry_id == first_answer).label == "good point"
        with pytest.raises(RewindError):
            await session.navigate("nope")
        await session.close()

    run(scenario())


def test_leaving_a_branch_can_keep_a_summary_of_it(harness: SessionHarness) -> None:
    async def scenario() -> None:
        faux = harness.faux(text_turn("one"), text_turn("two"), text_turn("We tried X; it failed."))
        session = await harness.open(faux)
        await session.prompt("first")
        await session.prompt("try X")
        first_answer = session.tree()[1].entry_id
        await session.navigate(first_answer, summarize=True)
        assert "try X" in str(faux.last_request.messages[0].content)
        texts = [m.text for m in session.messages]
        assert texts[:2] == ["first", "one"] and "We tried X; it failed." in texts[2]
        assert [n.role for n in session.tree() if n.on_branch][-1] == "summary"
        await session.close()

    run(scenario())


def test_a_failed_checkpoint_warns_and_the_agent_goes_on(
    harness: SessionHarness, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    empty = tmp_path / "no-git"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))

    async def scenario() -> None:
        session = await harness.open(harness.faux(text_turn("hi"), text_turn("again")))
        await session.prompt("hello")
        await session.prompt("more")
        assert [m.text for m in session.messages][-1] == "again"
        warnings = [n for n in harness.of_type(Notice) if "Undo is unavailable" in n.text]
        assert len(warnings) == 1  # once per cause, not at every message
        plan = await session.plan_rewind(session.checkpoints()[-1].message_id)
        assert plan.code is None and plan.code_unavailable
        with pytest.raises(RewindError):
            await session.rewind(plan, "code")
        await session.close()

    run(scenario())


def test_a_deleted_session_loses_its_checkpoints_when_the_next_one_starts(
    harness: SessionHarness,
) -> None:
    from picode.session.checkpoints.store import _REFS, session_key

    _project(harness)

    async def scenario() -> None:
        first = await harness.open(harness.faux(text_turn("hi")))
        await first.prompt("hello")
        gone, path = first.session_id, first.session_file_path
        await first.close()
        assert gone is not None and path is not None
        refs = next((harness.paths.data_dir / "checkpoints").iterdir()) / _REFS
        assert (refs / session_key(gone)).is_dir()
        path.unlink()  # the person deleted that session
        second = await harness.open(harness.faux(text_turn("again")))
        await second.prompt("hello")
        await second.close()  # waits for the housekeeping it started
        kept = second.session_id
        assert kept is not None
        assert sorted(p.name for p in refs.iterdir()) == [session_key(kept)]

    run(scenario())


def test_closing_stops_a_warm_up_still_reading_the_project(
    harness: SessionHarness, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import time

    real = shutil.which("git")
    wrappers = tmp_path / "slow-git"
    wrappers.mkdir()
    started = tmp_path / "status-started"
    script = wrappers / "git"
    # A git whose status takes a minute: a huge project read for the first time.
    script.write_text(
        f'#!/bin/sh\ncase "$*" in *" status "*) touch {started}; sleep 60;; esac\n'
        f'exec {real} "$@"\n'
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrappers}:/usr/bin:/bin")
    _project(harness)

    async def scenario() -> float:
        session = await harness.open(harness.faux(text_turn("hi")))
        await wait_until(started.exists, what="the warm-up's git status")
        before = time.monotonic()
        await session.close()
        return time.monotonic() - before

    assert run(scenario()) < 10


def test_a_tool_waits_for_the_checkpoint_only_so_long_and_that_step_is_not_undoable(
    harness: SessionHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from picode.session import checkpointing
    from picode.session.checkpoints.store import CheckpointStore

    monkeypatch.setattr(checkpointing, "CHECKPOINT_WAIT_S", 0.2)
    snapshot = CheckpointStore.snapshot

    def slow_snapshot(self: CheckpointStore, session_id: str, label: str) -> str:
        if label == "before message":
            time.sleep(1.5)  # a folder too large to checkpoint quickly
        return snapshot(self, session_id, label)

    monkeypatch.setattr(CheckpointStore, "snapshot", slow_snapshot)
    _project(harness)

    async def scenario() -> None:
        session = await harness.open(harness.faux(*_edit_and_bash()))
        started = time.monotonic()
        await session.prompt("change the files")
        assert (harness.cwd / "d.txt").exists()
        assert [c.code for c in session.checkpoints()] == [False]
        warned = [n.text for n in harness.of_type(Notice) if "took longer than" in n.text]
        assert len(warned) == 1
        assert time.monotonic() - started >= 1.5  # prompt still returns after it, settled
        await session.close()

    run(scenario())


def test_a_checkpoint_that_times_out_turns_undo_of_files_off_for_the_session(
    harness: SessionHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from picode.session.checkpoints import CheckpointTimeout
    from picode.session.checkpoints.store import CheckpointStore

    tries: list[str] = []

    def too_slow(self: CheckpointStore, session_id: str, label: str) -> str:
        tries.append(label)
        raise CheckpointTimeout("git status took longer than 60 s and was stopped")

    monkeypatch.setattr(CheckpointStore, "snapshot", too_slow)

    async def scenario() -> None:
        session = await harness.open(harness.faux(text_turn("one"), text_turn("two")))
        await session.prompt("first")
        await session.prompt("second")
        assert tries == ["before message"]  # never again after it timed out
        notes = [n.text for n in harness.of_type(Notice) if "Undo of files is off" in n.text]
        assert len(notes) == 1
        assert [c.code for c in session.checkpoints()] == [False, False]
        await session.close()

    run(scenario())


def test_a_command_the_person_ran_reads_as_they_typed_it(harness: SessionHarness) -> None:
    """``!cmd``'s output goes to the model as prose; /tree, /rewind, /fork, the list of
    sessions and the editor a rewind fills all show it as typed."""
    from picode.session.store.format import shell_run_text
    from picode.session.store.sessions import SessionStore

    async def scenario() -> None:
        session = await harness.open(harness.faux(text_turn("seen")))
        session.add_note(shell_run_text("git status --short", " M main.py\n"))
        await session.prompt("what changed?")
        assert session.messages[0].text.startswith("I ran `git status --short`:")
        assert [(n.role, n.text) for n in session.tree()][:2] == [
            ("user", "!git status --short"),
            ("user", "what changed?"),
        ]
        assert [c.text for c in session.checkpoints()] == ["!git status --short", "what changed?"]
        assert [text for _, text in session.user_messages_for_fork()] == [
            "!git status --short",
            "what changed?",
        ]
        ran = session.checkpoints()[0].message_id
        assert await session.navigate(ran) == "!git status --short"
        await session.close()

    run(scenario())
    [listed] = SessionStore(harness.paths.sessions_dir).list(harness.cwd)
    assert listed.first_message == "!git status --short"


def test_an_attached_files_contents_stay_out_of_the_lists_and_the_editor(
    harness: SessionHarness,
) -> None:
    """``@notes.txt`` attaches the file to the message; /tree, /rewind and /fork show what
    was typed, and going back puts only that in the editor, not the file's contents."""
    from picode.agent.file_blocks import text_file_block

    async def scenario() -> None:
        session = await harness.open(harness.faux(text_turn("read it"), text_turn("next")))
        block = text_file_block("notes.txt", 1, None, "the file's own words")
        await session.prompt("look at @notes.txt please", attachments=[block])
        await session.prompt("and then?")
        assert "the file's own words" in session.messages[0].text  # the model has it
        assert [n.text for n in session.tree() if n.role == "user"] == [
            "look at @notes.txt please",
            "and then?",
        ]
        typed = ["look at @notes.txt please", "and then?"]
        assert [c.text for c in session.checkpoints()] == typed
        assert [t for _, t in session.user_messages_for_fork()] == typed
        first = session.checkpoints()[0].message_id
        assert await session.navigate(first) == "look at @notes.txt please"
        await session.close()

    run(scenario())
