"""Slash commands: what exists, what each takes, and completing ``/na`` → ``/name``.

The registry only describes commands; running them is the app's job. A ``handler`` may be
attached (built-ins by the app, extension commands by whoever registers them) so the app
can dispatch without a second lookup table.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

#: A "template" is sent to the session as typed: it expands it (session/prompts).
CommandSource = Literal["builtin", "extension", "template", "skill"]

#: Letters or digits first, then word characters, ``:`` or ``-`` (as extensions allow).
_NAME = re.compile(r"^[A-Za-z0-9][\w:-]*$")


@dataclass(slots=True, frozen=True)
class SlashCommand:
    name: str
    """Without the slash."""
    description: str
    argument_hint: str | None = None
    """Shown after the name while completing, e.g. ``[instructions]``."""
    source: CommandSource = "builtin"
    #: Set by the app (built-ins) or the extension host; the registry never calls it.
    handler: Callable[..., Any] | None = None

    @property
    def usage(self) -> str:
        return f"/{self.name}" + (f" {self.argument_hint}" if self.argument_hint else "")


@dataclass(slots=True, frozen=True)
class ParsedCommand:
    command: SlashCommand
    argument: str
    """Everything after the name, stripped ("" when none)."""


#: What Claude Code, Codex and pi call a command picode has under another name.
OTHER_AGENTS_NAMES = {
    "approvals": "permissions",
    "approval": "permissions",
    "status": "session",
    "cost": "session",
    "usage": "session",
    "stats": "session",
    "keys": "hotkeys",
    "keybindings": "hotkeys",
    "branch": "fork",
    "share": "export",
}


class UnknownCommandError(LookupError):
    """A ``/word`` that names no command; the message suggests close names."""


BUILTIN_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("model", "Choose the model", "[provider/id]"),
    SlashCommand("thinking", "Set the thinking level", "[off|minimal|low|medium|high|xhigh]"),
    SlashCommand("theme", "Choose the colour theme (previews live)", "[name]"),
    SlashCommand("help", "Show the commands, the keys and where picode keeps its files"),
    SlashCommand("new", "Start a new session"),
    SlashCommand("clear", "Start a new session (the same as /new)"),
    SlashCommand("resume", "Resume an earlier session", "[id]"),
    SlashCommand("fork", "Start a new session from an earlier message"),
    SlashCommand("rewind", "Go back to before one of your messages: code, conversation or both"),
    SlashCommand("undo", "Undo your last message: its file changes and the conversation"),
    SlashCommand("tree", "The session's branches; go on from any point"),
    SlashCommand("label", "Name this point of the conversation in /tree", "[name]"),
    SlashCommand(
        "compact", "Summarise older messages to free context", "[--keep N] [instructions]"
    ),
    SlashCommand("session", "Show the session's file, id, messages and cost"),
    SlashCommand("context", "Show what fills the context window, part by part"),
    SlashCommand("name", "Name this session", "<name>"),
    SlashCommand("copy", "Copy the last reply to the clipboard"),
    SlashCommand("export", "Export the session to HTML and Markdown", "[path]"),
    SlashCommand(
        "login", "Save an API key for the model's provider (or the one named)", "[provider]"
    ),
    SlashCommand("logout", "Remove a saved API key", "[provider]"),
    SlashCommand("mcp", "MCP servers: state, tools, errors; /mcp login|logout NAME"),
    SlashCommand("skills", "Show the skills found and where they come from"),
    SlashCommand("hotkeys", "Show the key bindings"),
    SlashCommand("trust", "Trust this folder's .picode/ settings and code, or stop trusting it"),
    SlashCommand(
        "permissions",
        "What runs without asking; allow saves a command for this folder; clear / forget",
        "[allow COMMAND|clear|forget]",
    ),
    SlashCommand("sandbox", "Show the sandbox; allow or take back the network", "[network on|off]"),
    SlashCommand(
        "plan", "Plan mode on or off: only reading runs until you approve a plan", "[on|off]"
    ),
    SlashCommand("quit", "Quit picode"),
    SlashCommand("exit", "Quit picode (the same as /quit)"),
)


class CommandRegistry:
    """Built-in commands first, then extension commands in the order they were added."""

    def __init__(self, builtins: Iterable[SlashCommand] = BUILTIN_COMMANDS) -> None:
        self._commands: dict[str, SlashCommand] = {}
        for command in builtins:
            self.add(command)

    def __iter__(self) -> Iterator[SlashCommand]:
        return iter(list(self._commands.values()))

    def __len__(self) -> int:
        return len(self._commands)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.removeprefix("/") in self._commands

    def get(self, name: str) -> SlashCommand | None:
        return self._commands.get(name.removeprefix("/"))

    def add(self, command: SlashCommand) -> SlashCommand:
        """Register ``command``; a bad name or a name already taken raises ValueError."""
        if not _NAME.match(command.name):
            raise ValueError(
                f"command name {command.name!r} must start with a letter or digit and contain "
                "only letters, digits, '_', ':' or '-' (no slash, no spaces)"
            )
        existing = self._commands.get(command.name)
        if existing is not None:
            raise ValueError(
                f"the command /{command.name} already exists ({existing.source}: "
                f"{existing.description})"
            )
        self._commands[command.name] = command
        return command

    def add_extension_command(
        self,
        name: str,
        description: str,
        argument_hint: str | None = None,
        handler: Callable[..., Any] | None = None,
    ) -> SlashCommand:
        return self.add(SlashCommand(name, description, argument_hint, "extension", handler))

    def remove(self, name: str) -> None:
        """Forget an extension command, a template or a skill (built-ins stay)."""
        command = self._commands.get(name.removeprefix("/"))
        if command is not None and command.source != "builtin":
            del self._commands[command.name]

    def set_handler(self, name: str, handler: Callable[..., Any]) -> None:
        command = self.get(name)
        if command is None:
            raise KeyError(f"no command /{name.removeprefix('/')}")
        self._commands[command.name] = replace(command, handler=handler)

    def complete(self, prefix: str) -> list[SlashCommand]:
        """Commands whose name starts with what was typed after ``/``; when none does,
        those whose name contains it. An empty prefix lists everything."""
        typed = prefix.removeprefix("/").strip().lower()
        commands = list(self._commands.values())
        if not typed:
            return commands
        starts = [c for c in commands if c.name.lower().startswith(typed)]
        return starts or [c for c in commands if typed in c.name.lower()]

    def parse(self, text: str) -> ParsedCommand | None:
        """``/name args`` → the command and its argument; None for text that is not a
        command (no leading slash, or an existing path such as ``/usr/bin``).

        Raises UnknownCommandError for ``/word`` naming no command and no existing path.
        """
        stripped = text.strip()
        if not stripped.startswith("/"):
            return None
        body = stripped[1:]
        if not body or body[0].isspace():
            return None
        head = body.split(None, 1)[0]
        if not _NAME.match(head):
            if Path(stripped.split(None, 1)[0]).exists():
                return None  # a message that starts with a path, such as /usr/bin
            raise UnknownCommandError(
                f"/{head} is neither a command nor an existing path, so it was not sent. "
                "Type / to see the commands."
            )
        command = self._commands.get(head)
        if command is None:
            raise UnknownCommandError(self.unknown_message(head))
        return ParsedCommand(command, stripped[1 + len(head) :].strip())

    def unknown_message(self, name: str) -> str:
        known_as = OTHER_AGENTS_NAMES.get(name.lower())
        if known_as is not None and known_as in self._commands:
            return f"Unknown command /{name}. picode's is /{known_as}."
        near = difflib.get_close_matches(name, list(self._commands), n=3, cutoff=0.5)
        hint = f" Did you mean {', '.join('/' + n for n in near)}?" if near else ""
        return f"Unknown command /{name}.{hint} Type / to see the commands."
