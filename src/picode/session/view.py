"""What a front end may read of a session: a read-only view of its state.

A part of ``AgentSession`` (it inherits this). Nothing here changes the session; what it
returns is a copy or typed read-only, so a front end cannot change the session behind its
commands' back."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from picode.agent.file_blocks import split_attachments

if TYPE_CHECKING:
    from picode.agent.agent import Agent
    from picode.agent.tool import AgentTool
    from picode.ai.abort import AbortController
    from picode.ai.types import Message
    from picode.session.context_usage import ContextUsage
    from picode.session.extensions.loader import Command, ExtensionHost
    from picode.session.mcp.manager import McpManager
    from picode.session.mcp.status import McpServerStatus
    from picode.session.options import SessionOptions
    from picode.session.skills.discovery import Skill, SkillSet
    from picode.session.usage import SessionUsage


class SessionView:
    _agent: Agent
    _extensions: ExtensionHost
    _mcp: McpManager | None
    _options: SessionOptions
    _running: bool
    _abort_retry: AbortController | None
    _usage: SessionUsage
    _save_error: str | None
    _skills: SkillSet

    @property
    def cwd(self) -> Path:
        """The folder the session works in."""
        return self._options.cwd

    @property
    def project_trusted(self) -> bool:
        """The person trusts this folder: its config, extensions and rules are in force."""
        return self._options.project_trusted

    @property
    def sessions_dir(self) -> Path:
        """Where saved sessions live (``-c`` and ``-r`` look there)."""
        return self._options.paths.sessions_dir

    @property
    def is_running(self) -> bool:
        return self._running

    @property
    def retry_pending(self) -> bool:
        return self._abort_retry is not None

    @property
    def messages(self) -> Sequence[Message]:
        """The context as the model sees it next (read-only: change it by commands)."""
        return self._agent.state.messages

    @property
    def queued_steering(self) -> list[str]:
        return [split_attachments(message)[0] for message in self._agent.queued_steering]

    @property
    def queued_follow_ups(self) -> list[str]:
        return [split_attachments(message)[0] for message in self._agent.queued_follow_ups]

    @property
    def context_tokens(self) -> int:
        from picode.session.recovery.compaction import context_tokens

        return context_tokens(self._agent.state.messages)

    @property
    def usage(self) -> SessionUsage:
        """The conversation's tokens and cost so far (a copy)."""
        return dataclasses.replace(self._usage)

    @property
    def save_error(self) -> str | None:
        """Why the last write to the session file failed; None while everything is saved."""
        return self._save_error

    @property
    def extension_commands(self) -> dict[str, Command]:
        """Slash commands registered by extensions, by name."""
        return dict(self._extensions.commands)

    @property
    def skills(self) -> tuple[Skill, ...]:
        """The skills found as the session opened, in order of precedence (docs/skills.md)."""
        return self._skills.skills

    def mcp_servers(self) -> list[McpServerStatus]:
        """Each configured MCP server's state and tools (``McpServersChanged`` says when
        this changes); empty when none is configured."""
        return [] if self._mcp is None else self._mcp.statuses()

    def tool(self, name: str) -> AgentTool | None:
        """The tool of that name the model can call now, if any."""
        return next((tool for tool in self._agent.state.tools if tool.name == name), None)

    def context_usage(self) -> ContextUsage:
        """What fills the model's context now: the total the session measures and its parts,
        estimated (``/context``; ``session/context_usage.py``)."""
        from picode.session.context_usage import measure_context
        from picode.session.recovery.compaction import compaction_threshold
        from picode.session.skills import skills_prompt
        from picode.session.system_prompt import find_context_files

        state, options = self._agent.state, self._options
        parts = [
            (_shown(item.path, self.cwd), f"## {item.path}\n\n{item.content.strip()}")
            for item in find_context_files(self.cwd, options.paths.config_dir, [])
            if item.content
        ]
        if skill_list := skills_prompt(self._skills.skills, [tool.name for tool in state.tools]):
            parts.append((f"skills ({len(self._skills.skills)})", skill_list))
        window = state.model.context_window
        compaction = options.settings.compaction
        return measure_context(
            system_prompt=state.system_prompt,
            prompt_parts=parts,
            tools=state.tools,
            messages=state.messages,
            window=window,
            in_use=self.context_tokens,
            compacts_at=compaction_threshold(window, compaction.reserve_tokens)
            if compaction.enabled
            else None,
        )


def _shown(path: Path, cwd: Path) -> str:
    """A context file as a person locates it: from the project, else from home."""
    for base, prefix in ((cwd, ""), (Path.home(), "~/")):
        if path.is_relative_to(base):
            return prefix + str(path.relative_to(base))
    return str(path)
