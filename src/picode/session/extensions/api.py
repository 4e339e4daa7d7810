"""What an extension sees: ``register(api)`` receives an ``ExtensionAPI`` (docs/extensions.md).

Registrations made while ``register`` runs are held back and committed only when it returns,
so an extension that fails half-way leaves nothing behind.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from picode.agent.tool import AgentTool, ToolResult

#: Events whose handlers are only told (``handler(payload)`` or ``handler()``).
PLAIN_EVENTS = frozenset(
    {
        "session_start",
        "session_end",
        "agent_start",
        "agent_end",
        "turn_start",
        "turn_end",
        "message_start",
        "message_end",
    }
)
#: Events whose handlers may answer: block a call, replace a result, transform input.
HOOK_EVENTS = frozenset({"tool_call", "tool_result", "input"})
EVENTS = PLAIN_EVENTS | HOOK_EVENTS

DeliverAs = Literal["steer", "follow_up", "prompt"]
Level = Literal["info", "warning", "error"]
DELIVER_AS: frozenset[str] = frozenset({"steer", "follow_up", "prompt"})
LEVELS: frozenset[str] = frozenset({"info", "warning", "error"})

_COMMAND_NAME = re.compile(r"^[A-Za-z0-9][\w:-]*$")

Handler = Callable[..., Any]
CommandHandler = Callable[[str], Awaitable[None] | None]


@dataclass(slots=True)
class ToolCallInfo:
    name: str
    args: Any
    call_id: str


@dataclass(slots=True)
class ToolResultInfo:
    name: str
    args: Any
    call_id: str
    result: ToolResult


@dataclass(slots=True)
class Command:
    name: str
    description: str
    handler: CommandHandler
    extension: str


@dataclass(slots=True)
class Subscription:
    extension: str
    event: str
    handler: Handler
    #: False when the handler takes no argument (plain events only).
    takes_payload: bool


class ExtensionSink(Protocol):
    """What the session provides to extensions."""

    def send_message(self, text: str, deliver_as: str) -> None: ...

    def append_entry(self, custom_type: str, data: Any) -> None: ...

    def notify(self, text: str, level: str, source: str | None) -> None: ...


class Registrar(Protocol):
    """Where an extension's registrations go (``ExtensionHost``)."""

    cwd: Path
    sink: ExtensionSink

    def add_subscription(self, subscription: Subscription) -> None: ...

    def add_tool(self, tool: AgentTool, extension: str) -> None: ...

    def add_command(self, command: Command) -> None: ...


class ExtensionAPI:
    """Handed to ``register(api)``; keep it to act later (from handlers and commands)."""

    def __init__(self, host: Registrar, name: str, source: str) -> None:
        self._host = host
        #: The extension's name: its file or folder stem, or its entry-point name.
        self.name = name
        #: Where it was loaded from (a path or ``entry point NAME = module:attr``).
        self.source = source
        self.cwd: Path = host.cwd
        self._committed = False
        self._subscriptions: list[Subscription] = []
        self._tools: list[AgentTool] = []
        self._commands: list[Command] = []

    # --- registration ------------------------------------------------------------------

    def on(self, event: str, handler: Handler) -> None:
        """Run ``handler`` on ``event``; it may be sync or async.

        ``tool_call``: ``handler(ToolCallInfo)`` → None, or a string to block the call with
        that reason. ``tool_result``: ``handler(ToolResultInfo)`` → None, or a ToolResult to
        replace the result. ``input``: ``handler(text)`` → None, or the new text. Other
        events: ``handler(payload)`` or ``handler()``.
        """
        if event not in EVENTS:
            known = ", ".join(sorted(EVENTS))
            raise ValueError(f"unknown event {event!r}; known events: {known}")
        if not callable(handler):
            raise TypeError(f"the handler for {event!r} is not callable")
        takes_payload = event in HOOK_EVENTS or _accepts_argument(handler)
        subscription = Subscription(self.name, event, handler, takes_payload)
        if self._committed:
            self._host.add_subscription(subscription)
        else:
            self._subscriptions.append(subscription)

    def register_tool(self, tool: AgentTool) -> None:
        """Offer ``tool`` to the model (e.g. a ``FunctionTool``); register it in ``register``."""
        if not isinstance(tool, AgentTool):
            raise TypeError(
                "register_tool needs a tool with name, label, description, parameters, "
                "validate() and execute(); picode.agent.tool.FunctionTool is the simplest"
            )
        if self._committed:
            self._host.add_tool(tool, self.name)
        else:
            self._tools.append(tool)

    def register_command(self, name: str, description: str, handler: CommandHandler) -> None:
        """Add ``/name``; ``handler(argument_text)`` may be sync or async."""
        name = name.removeprefix("/")
        if not _COMMAND_NAME.match(name):
            raise ValueError(
                f"command name {name!r} must start with a letter or digit and contain only "
                "letters, digits, '_', '-' and ':'"
            )
        if not callable(handler):
            raise TypeError(f"the handler for /{name} is not callable")
        command = Command(name, description, handler, self.name)
        if self._committed:
            self._host.add_command(command)
        else:
            self._commands.append(command)

    # --- acting ------------------------------------------------------------------------

    def send_message(self, text: str, *, deliver_as: DeliverAs = "follow_up") -> None:
        """Send ``text`` as a user message: steer the running agent, queue it as a follow-up,
        or prompt at once when idle."""
        if deliver_as not in DELIVER_AS:
            raise ValueError(f"deliver_as must be one of {sorted(DELIVER_AS)}, not {deliver_as!r}")
        self._host.sink.send_message(text, deliver_as)

    def append_entry(self, custom_type: str, data: Any) -> None:
        """Record ``data`` (JSON-able) in the session file as a custom entry."""
        if not custom_type:
            raise ValueError("custom_type must be a non-empty string")
        self._host.sink.append_entry(custom_type, data)

    def notify(self, text: str, level: Level = "info") -> None:
        """Show ``text`` to the person (never to the model)."""
        if level not in LEVELS:
            raise ValueError(f"level must be one of {sorted(LEVELS)}, not {level!r}")
        self._host.sink.notify(text, level, self.name)

    # --- host side ---------------------------------------------------------------------

    def _commit(self) -> None:
        self._committed = True
        for subscription in self._subscriptions:
            self._host.add_subscription(subscription)
        for tool in self._tools:
            self._host.add_tool(tool, self.name)
        for command in self._commands:
            self._host.add_command(command)
        self._subscriptions.clear()
        self._tools.clear()
        self._commands.clear()


def _accepts_argument(handler: Handler) -> bool:
    try:
        signature = inspect.signature(handler)
    except (TypeError, ValueError):
        return True
    for parameter in signature.parameters.values():
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            return True
        if parameter.kind is parameter.VAR_POSITIONAL:
            return True
    return False
