"""Hooks: shell commands on the session's events, with Claude Code's exit codes and JSON."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
from pathlib import Path
from typing import Any

from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.ai.types import ToolResultMessage, UserMessage
from picode.session.config.hooks import HookSpec
from picode.session.config.settings import Settings, load_config
from picode.session.events import Notice
from picode.session.safety.approval import ApprovalDecision, ApprovalRequest
from picode.session.safety.trust import assess_project

from .conftest import SessionHarness, run, wait_until


def _settings(**hooks: list[dict[str, Any]]) -> Settings:
    settings = Settings()
    settings.hooks = {event: [HookSpec(**spec) for spec in specs] for event, specs in hooks.items()}  # type: ignore[misc]
    return settings


def _q(path: Path) -> str:
    return shlex.quote(str(path))


def _bash_turn(command: str) -> Any:
    return tool_turn(FauxToolCall("bash", {"command": command}))


def _tool_result(request: Any) -> ToolResultMessage:
    result = request.messages[-1]
    assert isinstance(result, ToolResultMessage)
    return result


def _notices(harness: SessionHarness) -> list[Notice]:
    return harness.of_type(Notice)


def test_a_pre_tool_use_hook_exiting_2_blocks_bash_and_the_model_reads_why(
    harness: SessionHarness,
) -> None:
    ran = harness.root / "ran"
    hook = "echo 'no rm -rf here' >&2; exit 2"
    settings = _settings(PreToolUse=[{"matcher": "Bash", "command": hook}])
    faux = harness.faux(_bash_turn(f"touch {_q(ran)}"), text_turn("ok"))

    async def scenario() -> None:
        session = await harness.open(faux, settings=settings)
        await session.prompt("clean up")
        result = _tool_result(faux.requests[1])
        assert result.is_error
        assert "PreToolUse" in result.text and "no rm -rf here" in result.text
        assert not ran.exists()
        assert any(
            "no rm -rf here" in n.text and n.source == "hook PreToolUse" for n in _notices(harness)
        )
        await session.close()

    run(scenario())


def test_the_hook_reads_the_event_as_json_and_a_non_matching_hook_stays_quiet(
    harness: SessionHarness,
) -> None:
    seen = harness.root / "seen.json"
    other = harness.root / "other"
    settings = _settings(
        PreToolUse=[
            {"matcher": "bash|write", "command": f"cat > {_q(seen)}"},
            {"matcher": "read", "command": f"touch {_q(other)}"},
        ]
    )
    faux = harness.faux(_bash_turn("echo hi"), text_turn("ok"))

    async def scenario() -> None:
        session = await harness.open(faux, settings=settings)
        await session.prompt("say hi")
        event = json.loads(seen.read_text())
        assert event["hook_event_name"] == "PreToolUse"
        assert event["tool_name"] == "bash"
        assert event["tool_input"] == {"command": "echo hi"}
        assert event["session_id"] == session.session_id
        assert event["cwd"] == str(harness.cwd)
        assert event["transcript_path"] and Path(event["transcript_path"]).name.endswith(".jsonl")
        assert not other.exists()
        assert "hi" in _tool_result(faux.requests[1]).text  # the call went on
        await session.close()

    run(scenario())


def test_json_decisions_deny_allow_and_ask(harness: SessionHarness) -> None:
    def decide(permission: str, why: str) -> str:
        output = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": permission,
                "permissionDecisionReason": why,
            }
        }
        return f"printf '%s' {shlex.quote(json.dumps(output))}"

    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision("yes")

    async def scenario(permission: str, policy: str) -> tuple[ToolResultMessage, int]:
        asked.clear()
        settings = _settings(PreToolUse=[{"command": decide(permission, "house rule 7")}])
        settings.approval = policy  # type: ignore[assignment]
        faux = harness.faux(_bash_turn("echo ran"), text_turn("ok"))
        session = await harness.open(faux, settings=settings, approver=approver)
        await session.prompt("go")
        await session.close()
        return _tool_result(faux.requests[1]), len(asked)

    denied, asks = run(scenario("deny", "never"))
    assert denied.is_error and "house rule 7" in denied.text and asks == 0
    allowed, asks = run(scenario("allow", "all"))
    assert not allowed.is_error and "ran" in allowed.text and asks == 0
    forced, asks = run(scenario("ask", "never"))
    assert not forced.is_error and asks == 1


def test_an_untrusted_projects_hooks_never_run_and_a_trusted_ones_add_to_the_users(
    harness: SessionHarness,
) -> None:
    project_mark = harness.root / "project-hook-ran"
    user_mark = harness.root / "user-hook-ran"
    config = harness.cwd / ".picode" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        "[[hooks.SessionStart]]\n"
        f"command = {json.dumps(f'touch {_q(project_mark)}')}\n"
        "[[hooks.PreToolUse]]\n"
        f"command = {json.dumps(f'touch {_q(project_mark)}')}\n"
    )
    harness.paths.user_config_file.parent.mkdir(parents=True, exist_ok=True)
    harness.paths.user_config_file.write_text(
        f"[[hooks.PreToolUse]]\ncommand = {json.dumps(f'touch {_q(user_mark)}')}\n"
    )

    untrusted = load_config(harness.paths, harness.cwd)
    assert [gate.loc for gate in untrusted.ignored] == [("hooks",)]
    assert "touch" in untrusted.ignored[0].description
    question = assess_project(harness.paths, harness.cwd)
    assert any("[hooks]" in item.description for item in question.items)

    async def scenario(settings: Settings, trusted: bool) -> None:
        faux = harness.faux(_bash_turn("echo hi"), text_turn("ok"))
        session = await harness.open(faux, settings=settings, project_trusted=trusted)
        await session.prompt("go")
        await session.close()

    run(scenario(untrusted.settings, False))
    assert user_mark.exists()
    assert not project_mark.exists()

    user_mark.unlink()
    trusted = load_config(harness.paths, harness.cwd, project_trusted=True).settings
    assert len(trusted.hooks["PreToolUse"]) == 2  # the lists add up
    run(scenario(trusted, True))
    assert user_mark.exists() and project_mark.exists()


def test_post_tool_use_tells_the_model_after_the_call(harness: SessionHarness) -> None:
    hook = "echo 'lint: 3 warnings in a.py' >&2; exit 2"
    settings = _settings(PostToolUse=[{"matcher": "bash", "command": hook}])
    faux = harness.faux(_bash_turn("echo built"), text_turn("ok"))

    async def scenario() -> None:
        session = await harness.open(faux, settings=settings)
        await session.prompt("build")
        result = _tool_result(faux.requests[1])
        assert "built" in result.text
        assert "PostToolUse hook: lint: 3 warnings in a.py" in result.text
        await session.close()

    run(scenario())


def test_user_prompt_submit_adds_context_or_blocks_the_prompt(harness: SessionHarness) -> None:
    hook = (
        "if grep -q secret; then echo 'prompt holds a secret' >&2; exit 2; "
        "else echo 'branch: main'; fi"
    )
    settings = _settings(UserPromptSubmit=[{"command": hook}])
    faux = harness.faux(text_turn("one"), text_turn("two"))

    async def scenario() -> None:
        session = await harness.open(faux, settings=settings)
        await session.prompt("what branch?")
        sent = faux.requests[0].messages[-1]
        assert isinstance(sent, UserMessage)
        assert "what branch?" in sent.text and "branch: main" in sent.text
        await session.prompt("my secret is 42")
        assert len(faux.requests) == 1  # nothing went out
        assert not any("secret is 42" in str(m) for m in session.messages)
        assert any("prompt holds a secret" in n.text for n in _notices(harness))
        await session.close()

    run(scenario())


def test_session_start_context_goes_after_the_system_prompt(harness: SessionHarness) -> None:
    seen = harness.root / "source"
    hook = f"cat > {_q(seen)}; echo 'Deploys are frozen this week.'"
    settings = _settings(SessionStart=[{"matcher": "startup|clear", "command": hook}])
    faux = harness.faux(text_turn("noted"), text_turn("again"))

    async def scenario() -> None:
        session = await harness.open(faux, settings=settings)
        assert json.loads(seen.read_text())["source"] == "startup"
        await session.prompt("hi")
        system = faux.requests[0].system_prompt or ""
        assert system.rstrip().endswith("</session-start-hook>")
        assert "Deploys are frozen this week." in system
        seen.unlink()
        await session.new_session()
        assert json.loads(seen.read_text())["source"] == "clear"
        await session.prompt("hi again")
        assert (faux.requests[1].system_prompt or "").count("Deploys are frozen") == 1
        await session.close()

    run(scenario())


def test_a_stop_hook_sends_the_agent_back_once_and_then_lets_it_stop(
    harness: SessionHarness,
) -> None:
    inputs = harness.root / "stop-inputs"
    hook = (
        f"cat >> {_q(inputs)}; echo >> {_q(inputs)}; "
        f"if [ $(wc -l < {_q(inputs)}) -lt 2 ]; then echo 'tests are red' >&2; exit 2; fi"
    )
    settings = _settings(Stop=[{"command": hook}])
    faux = harness.faux(text_turn("done"), text_turn("fixed the tests"))

    async def scenario() -> None:
        session = await harness.open(faux, settings=settings)
        await session.prompt("fix it")
        assert len(faux.requests) == 2
        pushed = faux.requests[1].messages[-1]
        assert isinstance(pushed, UserMessage) and "tests are red" in pushed.text
        events = [json.loads(line) for line in inputs.read_text().splitlines() if line.strip()]
        assert [event["stop_hook_active"] for event in events] == [False, True]
        await session.close()

    run(scenario())


def test_a_stop_hook_that_always_blocks_is_stopped_after_three(harness: SessionHarness) -> None:
    settings = _settings(Stop=[{"command": "echo 'more' >&2; exit 2"}])
    faux = harness.faux(*(text_turn(f"reply {n}") for n in range(6)))

    async def scenario() -> None:
        session = await harness.open(faux, settings=settings)
        await session.prompt("go")
        assert len(faux.requests) == 4
        assert any("3 times in a row" in n.text for n in _notices(harness))
        await session.close()

    run(scenario())


def test_a_slow_hook_times_out_without_blocking(harness: SessionHarness) -> None:
    settings = _settings(PreToolUse=[{"command": "sleep 30", "timeout_s": 0.3}])
    faux = harness.faux(_bash_turn("echo went-on"), text_turn("ok"))

    async def scenario() -> None:
        session = await harness.open(faux, settings=settings)
        await session.prompt("go")
        assert "went-on" in _tool_result(faux.requests[1]).text
        assert any("timed out" in n.text for n in _notices(harness))
        await session.close()

    run(scenario())


def test_esc_stops_a_running_hook_and_what_it_started(harness: SessionHarness) -> None:
    pid_file = harness.root / "hook.pid"
    settings = _settings(PreToolUse=[{"command": f"sleep 60 & echo $! > {_q(pid_file)}; wait"}])
    faux = harness.faux(_bash_turn("echo never"), text_turn("ok"))

    async def scenario() -> None:
        session = await harness.open(faux, settings=settings)
        task = asyncio.ensure_future(session.prompt("go"))
        await wait_until(lambda: pid_file.exists() and pid_file.read_text().strip(), 10)
        session.abort()
        await wait_until(task.done, 5, "the run to end after Esc")
        pid = int(pid_file.read_text())
        await wait_until(lambda: not _alive(pid), 5, "the hook's child to be killed")
        await session.close()

    run(scenario())


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[1].startswith("Z"))


def test_a_notification_hook_runs_when_an_approval_waits(harness: SessionHarness) -> None:
    seen = harness.root / "notification.json"
    settings = _settings(Notification=[{"command": f"cat > {_q(seen)}"}])
    settings.approval = "all"

    async def approver(request: ApprovalRequest) -> ApprovalDecision:
        await wait_until(seen.exists, 5, "the notification hook")
        return ApprovalDecision("yes")

    faux = harness.faux(_bash_turn("echo ok"), text_turn("ok"))

    async def scenario() -> None:
        session = await harness.open(faux, settings=settings, approver=approver)
        await session.prompt("go")
        await wait_until(lambda: seen.exists() and seen.read_text(), 5)
        event = json.loads(seen.read_text())
        assert event["hook_event_name"] == "Notification"
        assert "bash" in event["message"]
        await session.close()

    run(scenario())


def test_a_broken_hook_table_names_its_line_and_keeps_the_good_hooks(
    harness: SessionHarness,
) -> None:
    harness.paths.user_config_file.parent.mkdir(parents=True, exist_ok=True)
    harness.paths.user_config_file.write_text(
        "[[hooks.PreToolUse]]\n"
        'matcher = "(unclosed"\n'
        'command = "true"\n'
        "[[hooks.PreToolUse]]\n"
        'command = "echo fine"\n'
        "[[hooks.OnLunch]]\n"
        'command = "true"\n'
    )
    loaded = load_config(harness.paths, harness.cwd)
    assert [spec.command for spec in loaded.settings.hooks["PreToolUse"]] == ["echo fine"]
    shown = [str(problem) for problem in loaded.problems]
    assert any(":2:" in line and "matcher" in line for line in shown), shown
    assert any("OnLunch" in line for line in shown), shown
