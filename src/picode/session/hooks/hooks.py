"""Hooks: run the commands configured for an event and read what they decided.

A hook answers as Claude Code's do (docs/hooks.md): exit 0 is success (stdout may be a JSON
decision); exit 2 blocks what can be blocked and its stderr says why; any other exit code is
a failure that is shown and blocks nothing. The hooks of one event run at the same time.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from picode.session.config.hooks import HookEvent, HookSpec
from picode.session.hooks.runner import HookProcess, run_command

#: Exit code of a hook that blocks (Claude Code's convention).
BLOCK_EXIT = 2
#: Characters of one hook's output shown to the person.
SHOWN_LIMIT = 2000

Notify = Callable[[str, str, str | None], None]
Permission = Literal["allow", "deny", "ask"]


@dataclass(slots=True)
class HookVerdict:
    """What the hooks of one event decided together."""

    #: Why it is blocked (each blocking hook's reason); empty when nothing blocks.
    reasons: list[str] = field(default_factory=list)
    #: PreToolUse: "allow" skips the approval question, "ask" asks even where the policy
    #: would not; "deny" is a block.
    permission: Permission | None = None
    #: Text the hooks add to the model's context (``additionalContext``, or the stdout of
    #: ``SessionStart`` and ``UserPromptSubmit`` hooks).
    context: list[str] = field(default_factory=list)
    #: A hook said ``"continue": false``: the run stops (and why).
    stop: str | None = None

    @property
    def blocked(self) -> bool:
        return bool(self.reasons)

    @property
    def reason(self) -> str:
        return "\n".join(self.reasons) or "blocked by a hook"


class HookRunner:
    """The session's hooks (``[hooks]`` of the config files that apply)."""

    def __init__(
        self,
        hooks: Mapping[HookEvent, list[HookSpec]],
        cwd: Path,
        notify: Notify,
        common: Callable[[], dict[str, Any]],
    ) -> None:
        self._hooks = hooks
        self._cwd = cwd
        self._notify = notify
        #: The fields every event carries (session id, transcript path, ...), read fresh.
        self._common = common

    def wants(self, event: HookEvent, target: str | None = None) -> bool:
        return any(spec.matches(target) for spec in self._hooks.get(event, ()))

    async def run(
        self, event: HookEvent, fields: dict[str, Any], target: str | None = None
    ) -> HookVerdict:
        """Run ``event``'s hooks that match ``target``; their outputs are shown."""
        specs = [spec for spec in self._hooks.get(event, ()) if spec.matches(target)]
        verdict = HookVerdict()
        if not specs:
            return verdict
        payload = json.dumps({**self._common(), "hook_event_name": event, **fields}).encode()
        env = {**os.environ, "PICODE_PROJECT_DIR": str(self._cwd)}
        # Scripts written for Claude Code find the project the same way.
        env.setdefault("CLAUDE_PROJECT_DIR", str(self._cwd))
        processes = await asyncio.gather(
            *(
                run_command(spec.command, payload, cwd=self._cwd, env=env, timeout_s=spec.timeout_s)
                for spec in specs
            )
        )
        for process in processes:
            self._read(event, process, verdict)
        return verdict

    def _read(self, event: HookEvent, process: HookProcess, verdict: HookVerdict) -> None:
        source = f"hook {event}"
        if process.failure is not None:
            self._notify(f"{_short(process.command)} {process.failure}", "warning", source)
            return
        if process.exit_code == BLOCK_EXIT:
            reason = process.stderr.strip() or process.stdout.strip() or "blocked by a hook"
            verdict.reasons.append(reason)
            self._notify(f"{_short(process.command)} blocked: {_clip(reason)}", "warning", source)
            return
        if process.exit_code != 0:
            said = process.stderr.strip() or process.stdout.strip()
            text = f"{_short(process.command)} failed (exit {process.exit_code})"
            self._notify(text + (f": {_clip(said)}" if said else ""), "warning", source)
            return
        decision = _json_object(process.stdout)
        if decision is None:
            out = process.stdout.strip()
            if out and event in ("SessionStart", "UserPromptSubmit"):
                verdict.context.append(out)
            if out:
                self._notify(_clip(out), "info", source)
            return
        _apply(event, decision, verdict)
        message = decision.get("systemMessage")
        if isinstance(message, str) and message.strip():
            self._notify(_clip(message.strip()), "warning", source)


def _apply(event: HookEvent, decision: dict[str, Any], verdict: HookVerdict) -> None:
    """A JSON answer: Claude Code's fields (docs/hooks.md lists those picode reads)."""
    if decision.get("continue") is False:
        stop = decision.get("stopReason")
        verdict.stop = stop if isinstance(stop, str) and stop else f"a {event} hook stopped"
    specific = decision.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    context = specific.get("additionalContext")
    if isinstance(context, str) and context.strip():
        verdict.context.append(context.strip())
    reason = decision.get("reason")
    reason = reason if isinstance(reason, str) and reason.strip() else None
    permission = specific.get("permissionDecision")
    if permission in ("allow", "deny", "ask"):
        given = specific.get("permissionDecisionReason")
        reason = given if isinstance(given, str) and given.strip() else reason
    elif decision.get("decision") == "block":
        permission = "deny"
    elif decision.get("decision") == "approve":  # the older spelling of "allow"
        permission = "allow"
    if permission == "deny":
        verdict.reasons.append(reason or f"blocked by a {event} hook")
    elif permission == "ask" and verdict.permission != "deny":
        verdict.permission = "ask"
    elif permission == "allow" and verdict.permission is None:
        verdict.permission = "allow"
    if verdict.reasons:
        verdict.permission = "deny"


def _json_object(text: str) -> dict[str, Any] | None:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _short(command: str) -> str:
    line = command.strip().splitlines()[0] if command.strip() else command
    return "'" + (line if len(line) <= 60 else line[:57] + "...") + "'"


def _clip(text: str) -> str:
    return text if len(text) <= SHOWN_LIMIT else text[:SHOWN_LIMIT] + " …"
