"""Commands approved for good: saved for a folder ("project" at the question) or listed in
your own config's ``allow_commands`` (``session/safety/saved_approvals.py``)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.ai.types import ToolResultMessage
from picode.session.config.settings import Settings, load_config
from picode.session.paths import Paths
from picode.session.safety.approval import ApprovalDecision, ApprovalRequest
from picode.session.safety.command_scope import CommandScope
from picode.session.safety.saved_approvals import (
    SavedApprovals,
    SavedApprovalsError,
    configured_scope,
)

from .conftest import SessionHarness, run
from .test_config import write_project, write_user

ALL = Settings(approval="all")


def _bash(*commands: str) -> list[object]:
    return [*(tool_turn(FauxToolCall("bash", {"command": c})) for c in commands), text_turn("ok")]


def _answering(kind: str, asked: list[ApprovalRequest]):  # type: ignore[no-untyped-def]
    async def approver(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision(kind)  # type: ignore[arg-type]

    return approver


def _store(harness: SessionHarness, cwd: Path | None = None) -> SavedApprovals:
    return SavedApprovals.for_folder(harness.paths, cwd or harness.cwd)


def test_saved_for_the_folder_holds_in_the_next_session_there_and_nowhere_else(
    harness: SessionHarness, tmp_path: Path
) -> None:
    asked: list[ApprovalRequest] = []
    other = tmp_path / "other"
    other.mkdir()

    async def scenario() -> None:
        first = await harness.open(
            harness.faux(*_bash("npm test")),
            approver=_answering("project", asked),
            settings=ALL,
        )
        await first.prompt("go")
        assert [request.can_save for request in asked] == [True]
        await first.close()
        assert first.approvals_saved == (["commands starting with `npm test`"], None)

        # A new session in the same folder: `npm test …` runs unasked, `npm publish` asks.
        second = await harness.open(
            harness.faux(*_bash("npm test -- --watch=false", "npm publish", "npm test; rm -rf x")),
            approver=_answering("no", asked),
            settings=ALL,
        )
        await second.prompt("again")
        assert [request.preview for request in asked[1:]] == ["npm publish", "npm test; rm -rf x"]
        results = [m for m in second.messages if isinstance(m, ToolResultMessage)]
        denied = [result.text.startswith("The user denied") for result in results]
        assert denied == [False, True, True]
        await second.close()

        # Another folder has saved nothing.
        elsewhere = await harness.open(
            harness.faux(*_bash("npm test")),
            approver=_answering("no", asked),
            settings=ALL,
            cwd=other,
        )
        await elsewhere.prompt("there")
        assert asked[-1].preview == "npm test"
        assert elsewhere.approvals_saved == ([], None)
        await elsewhere.close()

    run(scenario())
    file = harness.paths.data_dir / "approved-commands.json"
    if os.name == "posix":
        assert stat.S_IMODE(file.stat().st_mode) == 0o600
    saved = json.loads(file.read_text(encoding="utf-8"))
    assert saved["folders"] == {str(harness.cwd.resolve()): [{"words": ["npm", "test"]}]}


def test_a_compound_command_is_saved_exactly_and_forget_takes_everything_back(
    harness: SessionHarness,
) -> None:
    asked: list[ApprovalRequest] = []

    async def scenario() -> None:
        session = await harness.open(
            harness.faux(
                *_bash("make lint && make test", "make lint && make test"),
                *_bash("make lint && make test"),
            ),
            approver=_answering("project", asked),
            settings=ALL,
        )
        await session.prompt("go")
        assert len(asked) == 1  # the second, identical, was covered
        assert session.approvals_saved == (["the command `make lint && make test`"], None)
        assert session.forget_saved_approvals() == 1
        assert session.approvals_saved == ([], None)
        assert session.forget_saved_approvals() == 0
        # Saved, it was never the conversation's: forgotten, it is asked about again.
        assert session.approvals_granted == []
        await session.prompt("again")
        assert len(asked) == 2
        await session.close()

    run(scenario())


def test_project_is_not_offered_nor_saved_for_what_is_not_a_command(
    harness: SessionHarness,
) -> None:
    asked: list[ApprovalRequest] = []
    faux = harness.faux(
        tool_turn(FauxToolCall("write", {"path": "a.txt", "content": "a"})),
        tool_turn(FauxToolCall("write", {"path": "b.txt", "content": "b"})),
        text_turn("ok"),
    )

    async def scenario() -> None:
        session = await harness.open(
            faux, approver=_answering("project", asked), settings=Settings(approval="edits")
        )
        await session.prompt("go")
        assert [request.can_save for request in asked] == [False]  # "always" for the tool
        assert session.approvals_granted == ["every write call"]
        assert session.approvals_saved == ([], None)
        await session.close()

    run(scenario())
    assert not (harness.paths.data_dir / "approved-commands.json").exists()


def test_a_damaged_file_approves_nothing_and_is_never_overwritten(
    harness: SessionHarness,
) -> None:
    file = harness.paths.data_dir / "approved-commands.json"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text('{"folders": {"', encoding="utf-8")
    asked: list[ApprovalRequest] = []

    async def scenario() -> None:
        session = await harness.open(
            harness.faux(*_bash("npm test", "npm test")),
            approver=_answering("project", asked),
            settings=ALL,
        )
        await session.prompt("go")
        # Approved for this conversation: the second call ran unasked; nothing saved.
        assert len(asked) == 1
        granted, problem = session.approvals_saved
        assert granted == [] and problem is not None and str(file) in problem
        assert session.approvals_granted == ["commands starting with `npm test`"]
        with pytest.raises(SavedApprovalsError):
            session.forget_saved_approvals()
        await session.close()

    run(scenario())
    assert file.read_text(encoding="utf-8") == '{"folders": {"'
    notices = [event for event in harness.events if getattr(event, "source", None) == "approval"]
    assert notices and "not saved" in notices[0].text


def test_entries_that_would_cover_every_command_are_not_read(paths: Paths, tmp_path: Path) -> None:
    folder = tmp_path.resolve()
    file = paths.data_dir / "approved-commands.json"
    file.parent.mkdir(parents=True, exist_ok=True)
    entries = [{"words": []}, {"words": [""]}, {"exact": "  "}, "git", {"words": ["git", 1]}]
    file.write_text(json.dumps({"folders": {str(folder): entries}}), encoding="utf-8")
    store = SavedApprovals.for_folder(paths, folder)
    assert store.scopes() == [] and store.problem is None
    assert not store.covers("rm -rf ~")


def test_another_picode_in_the_folder_adding_one_is_seen(paths: Paths, tmp_path: Path) -> None:
    mine, theirs = (
        SavedApprovals.for_folder(paths, tmp_path),
        SavedApprovals.for_folder(paths, tmp_path),
    )
    assert not mine.covers("cargo build --release")
    theirs.add(CommandScope(words=("cargo", "build")))
    assert mine.covers("cargo build --release")
    theirs.forget()
    assert not mine.covers("cargo build --release")


def test_allow_commands_in_your_config_run_unasked(harness: SessionHarness) -> None:
    write_user(harness.paths, 'approval = "all"\nallow_commands = ["git status", "pytest"]\n')
    settings = load_config(harness.paths, harness.cwd).settings
    asked: list[ApprovalRequest] = []

    async def scenario() -> None:
        session = await harness.open(
            harness.faux(*_bash("git status -s", "pytest -q tests", "git push", "pytest; ls")),
            approver=_answering("no", asked),
            settings=settings,
        )
        await session.prompt("go")
        assert [request.preview for request in asked] == ["git push", "pytest; ls"]
        assert session.approvals_configured == [
            ("config.toml", "commands starting with `git status`"),
            ("config.toml", "commands starting with `pytest`"),
        ]
        await session.close()

    run(scenario())


def test_a_projects_allow_commands_is_ignored_trusted_or_not(paths: Paths, cwd: Path) -> None:
    project = write_project(cwd, 'allow_commands = ["rm"]\n')
    for trusted in (False, True):
        loaded = load_config(paths, cwd, project_trusted=trusted)
        assert loaded.settings.allow_commands == []
        (problem,) = [p for p in loaded.problems if p.key == "allow_commands"]
        assert problem.file == project and problem.severity == "warning"


@pytest.mark.parametrize("entry", ["", "  ", "git diff; rm -rf ~", "make $(x)", "echo 'open"])
def test_an_allow_commands_entry_that_is_not_plain_words_is_refused(
    paths: Paths, cwd: Path, entry: str
) -> None:
    write_user(paths, f"allow_commands = [{json.dumps(entry)}]\n")
    loaded = load_config(paths, cwd)
    assert loaded.settings.allow_commands == []
    assert any(problem.key and "allow_commands" in problem.key for problem in loaded.problems)
    with pytest.raises(ValueError):
        configured_scope(entry)
