"""Approvals show what runs, byte for byte, and protected paths are asked about in every mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.ai.types import ToolResultMessage
from picode.session.safety.approval import (
    ApprovalDecision,
    ApprovalPolicy,
    ApprovalRequest,
    Approver,
    preview_for,
)

from .conftest import SessionHarness, run

SPOOF = "echo HIDDEN-PAYLOAD-RAN > hidden_ran.txt\r\x1b[2K\x1b[1Als -la"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "user-home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


class FakeApprover:
    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(request)
        kind = self.answers.pop(0) if self.answers else "yes"
        return ApprovalDecision(kind)  # type: ignore[arg-type]


def _run_calls(
    harness: SessionHarness,
    calls: list[tuple[str, dict[str, str]]],
    approver: Approver | None,
    policy: ApprovalPolicy = "never",
) -> list[ToolResultMessage]:
    faux = harness.faux(
        *(tool_turn(FauxToolCall(name, args)) for name, args in calls), text_turn("done")
    )
    results: list[ToolResultMessage] = []

    async def scenario() -> None:
        session = await harness.open(faux, approver=approver, approval=policy)
        await session.prompt("go")
        results.extend(m for m in session.messages if isinstance(m, ToolResultMessage))
        await session.close()

    run(scenario())
    return results


def test_the_spoofed_command_reaches_the_approver_spelled_out(harness: SessionHarness) -> None:
    approver = FakeApprover("no")
    _run_calls(harness, [("bash", {"command": SPOOF})], approver, "all")
    (request,) = approver.asked
    assert request.preview == "echo HIDDEN-PAYLOAD-RAN > hidden_ran.txt\\r␛[2K␛[1Als -la"
    assert request.args["command"] == SPOOF  # what runs is untouched


def test_a_newline_in_a_command_shows_as_a_new_line_and_a_mark() -> None:
    assert preview_for("bash", {"command": "ls\nrm -rf ~"}) == "ls↵\nrm -rf ~"


def test_write_and_edit_previews_spell_out_content_and_path() -> None:
    write = preview_for("write", {"path": "a\u202etxt.py", "content": "x = 1\r\n\x1b[8mhidden\n"})
    assert write.splitlines() == ["write aU+202Etxt.py (2 lines)", "+x = 1\\r", "+␛[8mhidden"]
    edit = preview_for("edit", {"path": "b.py", "old_text": "a\x07", "new_text": "b\x9b2J"})
    assert edit.splitlines() == ["edit b.py", "-a\\x07", "+b\\x9b2J"]


def test_policy_never_still_asks_for_a_shell_start_up_file(
    harness: SessionHarness, home: Path
) -> None:
    approver = FakeApprover("yes")
    results = _run_calls(
        harness, [("write", {"path": "~/.bashrc", "content": "echo hi\n"})], approver
    )
    (request,) = approver.asked
    assert request.protected == "a shell start-up file"
    assert not results[0].is_error
    assert (home / ".bashrc").read_text() == "echo hi\n"


def test_a_write_through_a_symlink_names_the_real_target(
    harness: SessionHarness, home: Path
) -> None:
    (home / ".bashrc").write_text("# mine\n")
    (harness.cwd / "link.txt").symlink_to(home / ".bashrc")
    approver = FakeApprover("no")
    results = _run_calls(harness, [("write", {"path": "link.txt", "content": "evil\n"})], approver)
    (request,) = approver.asked
    assert request.preview.splitlines()[0] == f"write link.txt → {home / '.bashrc'} (1 lines)"
    assert results[0].is_error and "shell start-up file" in results[0].text
    assert (home / ".bashrc").read_text() == "# mine\n"


@pytest.mark.parametrize(
    "where",
    [
        "sub/../.git/hooks/pre-commit",
        ".git/config",
        ".picode/extensions/x.py",
        "~/.ssh/authorized_keys",
        "~/.config/fish/config.fish",
    ],
)
def test_protected_paths_are_refused_without_an_approver(
    harness: SessionHarness, home: Path, where: str
) -> None:
    results = _run_calls(harness, [("write", {"path": where, "content": "x\n"})], None)
    assert results[0].is_error
    assert "always asks" in results[0].text and "no one to ask" in results[0].text
    assert not (harness.cwd / ".git").exists() and not (harness.cwd / ".picode").exists()
    assert not (home / ".ssh").exists() and not (home / ".config").exists()


def test_picodes_own_config_is_protected_and_always_is_not_remembered(
    harness: SessionHarness, home: Path
) -> None:
    config = harness.paths.config_dir / "config.toml"
    approver = FakeApprover("always", "no")
    results = _run_calls(
        harness,
        [
            ("write", {"path": str(config), "content": 'approval = "all"\n'}),
            ("edit", {"path": str(config), "old_text": '"all"', "new_text": '"never"'}),
        ],
        approver,
        "all",
    )
    assert [r.protected for r in approver.asked] == [
        "picode's config folder (settings, keys, extensions)"
    ] * 2
    assert not results[0].is_error and results[1].is_error
    assert config.read_text() == 'approval = "all"\n'


def test_an_ordinary_file_is_not_asked_about_under_never(harness: SessionHarness) -> None:
    approver = FakeApprover()
    results = _run_calls(harness, [("write", {"path": "notes.md", "content": "x\n"})], approver)
    assert approver.asked == [] and not results[0].is_error
