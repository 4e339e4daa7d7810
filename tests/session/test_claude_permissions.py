"""Claude Code's ``permissions`` rules for commands (``session/safety/claude_permissions.py``):
its users' allow lists work, its deny and ask lists win, a project's allow waits for trust."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.ai.types import ToolResultMessage
from picode.session.config.settings import Settings
from picode.session.paths import Paths
from picode.session.safety.approval import ApprovalDecision, ApprovalRequest
from picode.session.safety.claude_permissions import ClaudeRules, parse_rule, read_claude_rules
from picode.session.safety.trust import assess_project, record_decision

from .conftest import SessionHarness, run


def settings_file(folder: Path, **permissions: list[str]) -> Path:
    file = folder / ".claude" / "settings.json"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps({"permissions": permissions}), encoding="utf-8")
    return file


@pytest.mark.parametrize(
    ("rule", "matched", "not_matched"),
    [
        ("Bash(npm test)", ["npm test", " npm test "], ["npm test --watch", "npm tester"]),
        ("Bash(git diff:*)", ["git diff", "git diff --stat"], ["git difftool", "git log"]),
        ("Bash(git diff *)", ["git diff", "git diff HEAD~1"], ["git difftool"]),
        ("Bash(git * main)", ["git push origin main"], ["git push origin dev"]),
        ("Bash(npm run test*)", ["npm run tests"], ["npm run lint"]),
    ],
)
def test_a_rule_matches_as_claude_code_reads_it(
    rule: str, matched: list[str], not_matched: list[str]
) -> None:
    parsed = parse_rule(rule)
    assert parsed is not None
    assert all(parsed.matches(command) for command in matched)
    assert not any(parsed.matches(command) for command in not_matched)


def test_rules_of_other_tools_are_not_commands() -> None:
    assert parse_rule("Read(~/.zshrc)") is None
    assert parse_rule("Edit") is None
    assert parse_rule("mcp__github__create_issue") is None
    everything = parse_rule("Bash")
    assert everything is not None and everything.pattern is None


def test_deny_and_ask_win_over_allow_and_a_wildcard_never_covers_a_second_command(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    settings_file(
        home,
        allow=["Bash(git:*)", "Bash(make lint && make test)", "Read(*)"],
        deny=["Bash(git push:*)"],
        ask=["Bash(git * --force)"],
    )
    rules = read_claude_rules(tmp_path, home=home, trusted=False)
    assert rules.approves("git status")
    assert rules.approves("make lint && make test")  # written out exactly
    assert not rules.approves("git push origin main")
    assert not rules.approves("git fetch --force")
    assert not rules.approves("git status; curl x | sh")
    assert not rules.approves("git log $(rm -rf ~)")
    assert rules.described() == [
        "Bash(git:*) (~/.claude/settings.json)",
        "Bash(make lint && make test) (~/.claude/settings.json)",
    ]


def test_a_projects_allow_waits_for_trust_its_deny_does_not(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    settings_file(home, allow=["Bash(npm:*)"])
    settings_file(project, allow=["Bash(curl:*)"], deny=["Bash(npm publish:*)"])
    untrusted = read_claude_rules(project, home=home, trusted=False)
    assert not untrusted.approves("curl https://example.com")
    assert untrusted.approves("npm test")
    assert not untrusted.approves("npm publish")  # the project's deny counts untrusted
    assert untrusted.unused == ("Bash(curl:*) (.claude/settings.json): this folder is not trusted",)
    trusted = read_claude_rules(project, home=home, trusted=True)
    assert trusted.approves("curl https://example.com")


def test_every_command_is_not_taken_from_an_allow_list(tmp_path: Path) -> None:
    settings_file(tmp_path, allow=["Bash", "Bash(*)"])
    rules = read_claude_rules(tmp_path / "nowhere", home=tmp_path, trusted=True)
    assert not rules.approves("ls")
    assert len(rules.unused) == 2 and "every command" in rules.unused[0]


def test_a_file_that_cannot_be_read_leaves_every_allow_rule_out(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    settings_file(home, allow=["Bash(git status)"])
    local = project / ".claude" / "settings.local.json"
    local.parent.mkdir(parents=True)
    local.write_text('{"permissions": {"deny": ["Bash(git st', encoding="utf-8")
    rules = read_claude_rules(project, home=home, trusted=True)
    assert not rules.approves("git status")  # the damaged file may have denied it
    assert rules.problems and str(local) in rules.problems[0]
    assert ClaudeRules().approves("git status") is False


def test_claude_codes_allow_list_runs_commands_unasked_in_a_session(
    harness: SessionHarness,
) -> None:
    settings_file(Path.home(), allow=["Bash(echo:*)"], deny=["Bash(echo secret:*)"])
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision("no")

    faux = harness.faux(
        tool_turn(FauxToolCall("bash", {"command": "echo hello"})),
        tool_turn(FauxToolCall("bash", {"command": "echo secret"})),
        text_turn("ok"),
    )

    async def scenario() -> None:
        session = await harness.open(faux, approver=approver, settings=Settings(approval="all"))
        await session.prompt("go")
        assert asked == []  # one ran unasked, the other was refused unasked
        results = [m.text for m in session.messages if isinstance(m, ToolResultMessage)]
        assert "hello" in results[0] and results[1].startswith("Not run: Claude Code's")
        assert session.approvals_configured == [
            ("Claude Code", "Bash(echo:*) (~/.claude/settings.json)"),
            ("Never run", "Bash(echo secret:*) (Claude Code's deny)"),
        ]
        await session.close()

    run(scenario())


def test_the_trust_question_names_a_projects_allow_rules_and_asks_again_when_they_change(
    paths: Paths, cwd: Path
) -> None:
    settings_file(cwd, allow=["Bash(curl:*)"])
    trust = assess_project(paths, cwd)
    (item,) = trust.items
    assert item.source == ".claude/settings.json"
    assert "Bash(curl:*)" in item.description and trust.needs_answer
    record_decision(paths, trust, "trusted")
    assert assess_project(paths, cwd).trusted
    settings_file(cwd, allow=["Bash(curl:*)", "Bash(rm:*)"])
    again = assess_project(paths, cwd)
    assert again.changed and not again.trusted
    # Only deny rules: nothing to trust, nothing asked.
    settings_file(cwd, deny=["Bash(rm:*)"])
    assert assess_project(paths, cwd).items == []


def test_deny_refuses_and_ask_asks_whatever_the_mode(harness: SessionHarness) -> None:
    settings_file(
        Path.home(), allow=["Bash(git:*)"], deny=["Bash(git push:*)"], ask=["Bash(git reset:*)"]
    )
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision("no", "not now")

    commands = ["git push origin main", "git reset --hard", "ls"]
    faux = harness.faux(
        *(tool_turn(FauxToolCall("bash", {"command": c})) for c in commands), text_turn("ok")
    )

    async def scenario() -> None:
        # approval = "never": nothing is asked but what Claude Code's ask list names.
        session = await harness.open(faux, approver=approver)
        await session.prompt("go")
        assert [request.preview for request in asked] == ["git reset --hard"]
        results = [m.text for m in session.messages if isinstance(m, ToolResultMessage)]
        assert results[0] == "Not run: Claude Code's permissions.deny lists Bash(git push:*)."
        assert results[1].startswith("The user denied this bash call")
        assert not results[2].startswith(("Not run", "The user denied"))
        await session.close()

    run(scenario())


def test_an_ask_rule_with_nobody_to_ask_refuses(harness: SessionHarness) -> None:
    settings_file(Path.home(), ask=["Bash(rm *)"])
    faux = harness.faux(tool_turn(FauxToolCall("bash", {"command": "rm -f x"})), text_turn("ok"))

    async def scenario() -> None:
        session = await harness.open(faux)  # no approver: print mode without --approve
        await session.prompt("go")
        (result,) = [m for m in session.messages if isinstance(m, ToolResultMessage)]
        assert result.is_error and "permissions.ask (Bash(rm *))" in result.text
        assert "nobody can here" in result.text
        await session.close()

    run(scenario())


def test_what_an_ask_rule_asks_about_offers_no_always_and_is_asked_again(
    harness: SessionHarness,
) -> None:
    settings_file(Path.home(), ask=["Bash(git push:*)"])
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision("always")  # what a client might send anyway

    faux = harness.faux(
        *(tool_turn(FauxToolCall("bash", {"command": "git push"})) for _ in range(2)),
        text_turn("ok"),
    )

    async def scenario() -> None:
        session = await harness.open(faux, approver=approver, settings=Settings(approval="all"))
        await session.prompt("go")
        assert len(asked) == 2  # "always" did not stop the second question
        first = asked[0]
        assert first.asked_by == "Claude Code's permissions.ask (Bash(git push:*))"
        assert first.always_means is None and not first.can_save
        assert session.approvals_granted == []
        await session.close()

    run(scenario())
