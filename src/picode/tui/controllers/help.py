"""``/help`` and the prompt templates' place among the slash commands.

Templates come from the session (session/prompts): the registry lists them so completion
shows their description and argument hint, and sending one is sending a message, which the
session expands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from picode.ai.untrusted import one_line
from picode.tui.completion.commands import CommandRegistry, SlashCommand
from picode.tui.widgets.info import InfoView

if TYPE_CHECKING:
    from picode.session.agent_session import AgentSession
    from picode.tui.config import TuiConfig
    from picode.tui.controllers.host import Reporter


class TemplateCommands:
    """Keeps the registry's templates those of the current session."""

    def __init__(self, reporter: Reporter, registry: CommandRegistry) -> None:
        self._reporter = reporter
        self._registry = registry
        self._names: list[str] = []
        self._of: AgentSession | None = None

    def sync(self, session: AgentSession | None) -> None:
        if session is None or session is self._of:
            return
        self._of = session
        for name in self._names:
            self._registry.remove(name)
        self._names = []
        for template in session.prompt_templates:
            # Read from files: one escaped line each, never raw text on the terminal.
            command = SlashCommand(
                template.name,
                one_line(template.description, 80),
                one_line(template.argument_hint, 40) if template.argument_hint else None,
                "template",
            )
            try:
                self._registry.add(command)
            except ValueError as exc:  # taken by an extension command
                self._reporter.report(f"Prompt template {template.path}: {exc}", "warning")
                continue
            self._names.append(template.name)


def help_views(
    registry: CommandRegistry, hotkey_lines: list[str], config: TuiConfig
) -> list[InfoView]:
    """The commands (templates included), the keys, and where picode keeps its files."""
    commands: list[str | tuple[str, str]] = [
        (command.usage, command.description) for command in registry
    ]
    places: list[str | tuple[str, str]] = []
    if config.config_dir is not None:
        places += [
            ("config", str(config.config_dir / "config.toml")),
            ("prompt templates", str(config.config_dir / "prompts")),
            ("skills", str(config.config_dir / "skills")),
        ]
    if config.keymap_file is not None:
        places.append(("keys", str(config.keymap_file)))
    if config.sessions_dir is not None:
        places.append(("sessions", str(config.sessions_dir)))
    places.append(("this project", str(config.cwd / ".picode")))
    return [
        InfoView("Commands", commands),
        InfoView("Keys", hotkey_lines),
        InfoView("Where picode keeps its files", places),
    ]
