"""What front ends see of each MCP server: immutable snapshots, cheap to import."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

McpState: TypeAlias = Literal[
    "connecting",
    "ready",
    "needs_login",
    "failed",
    "timed_out",
    "disconnected",
    "disabled",
    "stopped",
]

#: Prefix and separator of the names MCP tools have for the model: ``mcp__<server>__<tool>``.
TOOL_PREFIX = "mcp__"
TOOL_SEPARATOR = "__"


class McpLoginError(Exception):
    """A login to an MCP server (or a logout) did not complete; the message says why."""


class McpPromptError(Exception):
    """A server's prompt could not be run (a missing argument, the server's error)."""


@dataclass(frozen=True, slots=True)
class McpServerStatus:
    name: str
    #: "stdio", "http" or "sse".
    transport: str
    state: McpState
    #: The tools offered to the model (their ``mcp__`` names), in the server's order.
    tools: tuple[str, ...] = ()
    #: Why the server is failed, timed out, disconnected or needs a login.
    error: str | None = None
    #: OAuth: "logged in", "not logged in"; None when picode does not log in to it.
    login: str | None = None

    @property
    def summary(self) -> str:
        """A few words for people: "ready (3 tools)", "failed: …"."""
        if self.state == "ready":
            count = len(self.tools)
            return f"ready ({count} tool{'s' if count != 1 else ''})"
        label: str = "waiting for a login" if self.state == "needs_login" else self.state
        label = label.replace("_", " ")
        return f"{label}: {self.error}" if self.error else label


def tool_display_name(name: str) -> str | None:
    """``mcp__files__read_file`` → ``files › read_file``; None for other tools."""
    if not name.startswith(TOOL_PREFIX):
        return None
    server, separator, tool = name[len(TOOL_PREFIX) :].partition(TOOL_SEPARATOR)
    if not separator or not server or not tool:
        return None
    return f"{server} › {tool}"


@dataclass(frozen=True, slots=True)
class McpPromptArgument:
    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True, slots=True)
class McpPrompt:
    """A server's prompt, run as the slash command ``/mcp__<server>__<prompt> args``."""

    #: The command's name without the slash: ``mcp__<server>__<prompt>``.
    command: str
    server: str
    #: The prompt's own name on its server.
    name: str
    #: The server's words: untrusted, shown escaped.
    description: str = ""
    arguments: tuple[McpPromptArgument, ...] = ()

    @property
    def usage(self) -> str:
        """``<code> [focus]``: the arguments, required ones first as the server lists them."""
        return " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in self.arguments)


@dataclass(frozen=True, slots=True)
class McpResource:
    """A server's resource, attached to a message as ``@<server>:<uri>``."""

    server: str
    uri: str
    name: str = ""
    description: str = ""
    mime_type: str | None = None

    @property
    def mention(self) -> str:
        return f"@{self.server}:{self.uri}"
