"""Claude Code's hooks, where its users keep them (docs/hooks.md, "Claude Code's hooks").

With ``claude_hooks = true`` in your own config.toml, the ``hooks`` of
``~/.claude/settings.json`` run as picode's own, and those of the folder's
``.claude/settings.json`` and ``settings.local.json`` once the folder is trusted (the trust
question lists their commands). Off by default: hooks run outside the sandbox.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import ValidationError

from picode.session.config.hooks import HOOK_EVENTS, HookEvent, HookSpec
from picode.session.paths import Paths
from picode.session.safety.claude_permissions import PROJECT_FILES, read_claude_settings

#: The key in your config.toml that turns them on.
SWITCH = "claude_hooks"


def wants_claude_hooks(paths: Paths) -> bool:
    """Did you turn them on? (A plain read of your config.toml: the trust question needs it
    before the settings are validated.)"""
    try:
        data = tomllib.loads(paths.user_config_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return data.get(SWITCH) is True


def read_claude_hooks(file: Path, problems: list[str]) -> dict[HookEvent, list[HookSpec]]:
    """The command hooks of one settings file, as picode's ``[[hooks.<Event>]]``; a broken
    one said in ``problems``. Hooks of events picode has not (``SubagentStop``...) and of
    other kinds (``"prompt"``) are Claude Code's own: left out without a word each start
    (docs/hooks.md lists them)."""
    table = read_claude_settings(file, problems).get("hooks")
    found: dict[HookEvent, list[HookSpec]] = {}
    if not isinstance(table, dict):
        return found
    for event, groups in table.items():
        if event not in HOOK_EVENTS or not isinstance(groups, list):
            continue
        for group in groups:
            for spec in _group_hooks(group, file, problems):
                found.setdefault(event, []).append(spec)
    return found


def _group_hooks(group: object, file: Path, problems: list[str]) -> list[HookSpec]:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        problems.append(f'{file}: a hook group without a "hooks" list; left out')
        return []
    matcher = group.get("matcher", "")
    specs: list[HookSpec] = []
    for hook in group["hooks"]:
        if not isinstance(hook, dict) or hook.get("type") != "command":
            continue
        fields = {"command": hook.get("command"), "matcher": matcher}
        if "timeout" in hook:
            fields["timeout_s"] = hook["timeout"]
        try:
            specs.append(HookSpec.model_validate(fields))
        except ValidationError as exc:
            problems.append(f"{file}: a hook left out ({exc.errors()[0]['msg']})")
    return specs


def claude_hooks_for(
    cwd: Path, *, trusted: bool, problems: list[str], home: Path | None = None
) -> dict[HookEvent, list[HookSpec]]:
    """Yours, then the folder's when ``trusted``: the lists add up, as picode's own do."""
    home = home if home is not None else Path.home()
    files = [home / ".claude" / "settings.json"]
    files += [cwd / name for name in PROJECT_FILES] if trusted else []
    hooks: dict[HookEvent, list[HookSpec]] = {}
    for file in files:
        for event, specs in read_claude_hooks(file, problems).items():
            hooks.setdefault(event, []).extend(specs)
    return hooks


def add_claude_hooks(
    hooks: dict[HookEvent, list[HookSpec]], cwd: Path, *, trusted: bool
) -> list[str]:
    """Add Claude Code's hooks to ``hooks`` (after picode's own); what was left out, why."""
    problems: list[str] = []
    for event, specs in claude_hooks_for(cwd, trusted=trusted, problems=problems).items():
        hooks.setdefault(event, []).extend(specs)
    return problems


def project_hook_commands(cwd: Path) -> list[tuple[str, list[str]]]:
    """(file, its hooks' commands) of the folder's files: what trusting it would run."""
    found: list[tuple[str, list[str]]] = []
    for name in PROJECT_FILES:
        hooks = read_claude_hooks(cwd / name, [])
        commands = [spec.command for specs in hooks.values() for spec in specs]
        if commands:
            found.append((str(name), commands))
    return found
