"""picode's own commands in an editor (ACP): advertised with ``available_commands_update``
and answered by picode itself, without asking the model (docs/acp.md, "Commands")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp import helpers
from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from picode.ai.untrusted import one_line

if TYPE_CHECKING:
    from acp.schema import AvailableCommandsUpdate

    from picode.session.agent_session import AgentSession
    from picode.session.checkpoints import RestoreReport
    from picode.session.rewinding import RestoreWhat, RewindPlan

REWIND_HINT = "N [code|conversation]: N of your messages back (1 = the last); both by default"


def available_commands(session: AgentSession | None = None) -> AvailableCommandsUpdate:
    """picode's commands, then the session's prompt templates and skills (the session
    expands ``/name`` and ``/skill:name`` when the prompt arrives; docs/prompts.md)."""

    def command(name: str, description: str, hint: str | None = None) -> AvailableCommand:
        given = AvailableCommandInput(UnstructuredCommandInput(hint=hint)) if hint else None
        return AvailableCommand(name=name, description=description, input=given)

    commands = [
        command("undo", "Undo your last message: its file changes and the conversation"),
        command("rewind", "Go back to before one of your messages", REWIND_HINT),
        command("checkpoints", "List your messages that /rewind can go back to"),
    ]
    for template in session.prompt_templates if session is not None else []:
        hint = template.argument_hint
        commands.append(command(template.name, one_line(template.description, 200), hint))
    for skill in session.skills if session is not None else []:
        described = one_line(skill.description, 200)
        commands.append(command(f"skill:{skill.name}", described, "[args]"))
    return helpers.update_available_commands(commands)


async def run_command(session: AgentSession, text: str) -> str | None:
    """The reply to ``/undo``, ``/rewind …`` or ``/checkpoints``; None for anything else
    (a prompt for the model). Raises ``RewindError`` with what went wrong."""
    words = text.split()
    if not words or words[0] not in ("/undo", "/rewind", "/checkpoints"):
        return None
    from picode.session.rewinding import RewindError

    mine = session.checkpoints()
    if words[0] == "/checkpoints":
        if not mine:
            return "No message of yours to go back to yet."
        lines = [
            f"{n}. {'' if c.code else '(conversation only) '}{one_line(c.text, 100)}"
            for n, c in enumerate(reversed(mine), 1)
        ]
        return "Your messages, the last first (/rewind N goes back to before one):\n" + "\n".join(
            lines
        )
    if words[0] == "/undo":
        result = await session.undo()
        return _done(result.text, result.report, True)
    back, restore = _rewind_arguments(words[1:])
    if not mine:
        raise RewindError("nothing to rewind: no message of yours yet")
    if back > len(mine):
        raise RewindError(f"there are only {len(mine)} of your messages to go back to")
    plan = await session.plan_rewind(mine[-back].message_id)
    if restore == "both" and plan.code is None:
        restore = "conversation"
    result = await session.rewind(plan, restore)
    return _plan_note(plan) + _done(result.text, result.report, restore != "code")


def _rewind_arguments(words: list[str]) -> tuple[int, RestoreWhat]:
    from picode.session.rewinding import RewindError

    if not words or not words[0].isdigit() or int(words[0]) < 1 or len(words) > 2:
        raise RewindError(f"usage: /rewind {REWIND_HINT}")
    what = words[1] if len(words) > 1 else "both"
    if what not in ("code", "conversation", "both"):
        raise RewindError(f"usage: /rewind {REWIND_HINT}")
    restore: RestoreWhat = "code" if what == "code" else "conversation"
    if what == "both":
        restore = "both"
    return int(words[0]), restore


def _plan_note(plan: RewindPlan) -> str:
    if plan.code is None:
        return f"The files were not restored: {one_line(plan.code_unavailable or '', 200)}. "
    return ""


def _done(text: str, report: RestoreReport | None, moved: bool) -> str:
    from picode.session.rewinding import describe_restore

    parts = [describe_restore(report)] if report is not None else []
    if moved:
        parts.append(f"The conversation is back to before “{one_line(text, 100)}”.")
    return " ".join(parts)
