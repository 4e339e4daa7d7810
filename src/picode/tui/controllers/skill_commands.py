"""``/skill:name [args]`` and ``/skills`` (docs/skills.md).

The session's skills become commands in the registry (completion shows each one with its
description) once the session is open; running one sends the message that tells the model
to use that skill now.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from picode.tui.completion.commands import SlashCommand
from picode.tui.controllers.command_error import CommandError, session_of
from picode.tui.widgets.info import InfoView

if TYPE_CHECKING:
    from picode.session.agent_session import AgentSession
    from picode.session.skills import Skill
    from picode.tui.completion.commands import CommandRegistry
    from picode.tui.controllers.host import CommandHost

PREFIX = "skill:"


class SkillCommands:
    def __init__(self, host: CommandHost, registry: CommandRegistry) -> None:
        self.host = host
        self.registry = registry
        self._listed: tuple[Skill, ...] = ()

    def sync(self, session: AgentSession | None) -> None:
        """The registry lists the open session's skills (a new session may have others)."""
        skills = session.skills if session is not None else ()
        if skills == self._listed:
            return
        for skill in self._listed:
            self.registry.remove(PREFIX + skill.name)
        self._listed = ()
        for skill in skills:
            command = SlashCommand(
                PREFIX + skill.name,
                skill.description,
                "[args]",
                "skill",
                partial(self.use, skill.name),
            )
            try:
                self.registry.add(command)
            except ValueError as exc:
                self.host.report(f"Skill {skill.path}: {exc}", "warning")
        self._listed = skills

    async def use(self, name: str, argument: str) -> None:
        session = session_of(self.host)
        if not any(s.name == name for s in session.skills):
            raise CommandError(f"/{PREFIX}{name} is no longer available.")
        # The session turns it into the message that names the skill (for -p, rpc and
        # editors alike).
        text = f"/{PREFIX}{name} {argument}".rstrip()
        if session.is_running:
            session.follow_up(text)
            self.host.report(f"/{PREFIX}{name} will be sent when picode is done.")
            return
        await session.prompt(text)

    async def list(self, argument: str) -> None:
        session = session_of(self.host)
        if not session.skills:
            self.host.report(
                "No skills were found. Put a folder with a SKILL.md in .picode/skills/, "
                ".agents/skills/ or .claude/skills/ (see docs/skills.md)."
            )
            return
        lines: list[str | tuple[str, str]] = []
        for skill in session.skills:
            lines.append((skill.name, skill.description))
            lines.append(("", f"{skill.scope} · {skill.path}"))
        self.host.transcript.add(InfoView(f"Skills ({len(session.skills)})", lines))
