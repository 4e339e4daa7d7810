"""All configured MCP servers of a session: started in the background, their tools offered.

The session asks for ``tools()`` and ``statuses()`` whenever ``on_change`` fires (a server
connected, failed, went away or changed its tool list).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from picode.agent.tool import AgentTool
from picode.session.config.mcp import McpServer
from picode.session.mcp.connection import McpConnection
from picode.session.mcp.controls import McpHooks
from picode.session.mcp.status import McpPrompt, McpResource, McpServerStatus
from picode.session.mcp.tool import McpTool, model_tool_name

if TYPE_CHECKING:
    from mcp import types


class McpManager:
    def __init__(
        self,
        servers: Mapping[str, McpServer],
        cwd: Path,
        on_change: Callable[[], None],
        hooks: McpHooks | None = None,
    ) -> None:
        hooks = hooks or McpHooks()
        self._connections = [
            McpConnection(name, config, cwd, on_change, hooks.auth, hooks.elicit)
            for name, config in servers.items()
        ]

    def connection(self, name: str) -> McpConnection | None:
        return next((c for c in self._connections if c.name == name), None)

    def start(self) -> None:
        for connection in self._connections:
            connection.start()

    async def wait_settled(self) -> None:
        """Until every server has connected or failed (each within its timeout_s)."""
        await asyncio.gather(*(c.wait_settled() for c in self._connections))

    async def close(self) -> None:
        await asyncio.gather(*(c.stop() for c in self._connections))

    def tools(self) -> list[McpTool]:
        """The tools offered to the model: every known server's, filtered by its config.
        A server that went away keeps its tools: calling one starts it again."""
        offered: list[McpTool] = []
        taken: set[str] = set()
        for connection in self._connections:
            config = connection.config
            for tool in connection.tools:
                name = model_tool_name(connection.name, tool.name)
                if not config.tools.offers(tool.name) or name in taken or _task_only(tool):
                    continue
                taken.add(name)
                offered.append(
                    McpTool(
                        name=name,
                        label=f"{connection.name} › {tool.name}",
                        description=tool.description or tool.title or tool.name,
                        parameters=dict(tool.input_schema),
                        tool=tool.name,
                        connection=connection,
                        read_only=_read_only(tool),
                    )
                )
        return offered

    def offer(self, own: Sequence[AgentTool]) -> tuple[list[AgentTool], frozenset[str]]:
        """``own`` tools plus the MCP tools whose names are free; and the MCP tools asked
        about under ``approval = "all"`` (all but those in their server's ``approved``)."""
        taken = {tool.name for tool in own}
        offered = [tool for tool in self.tools() if tool.name not in taken]
        approved = {
            model_tool_name(c.name, tool)
            for c in self._connections
            for tool in c.config.tools.approved
        }
        gated = frozenset(tool.name for tool in offered if tool.name not in approved)
        return [*own, *offered], gated

    def prompts(self) -> list[tuple[McpConnection, McpPrompt]]:
        """Every ready server's prompts, each with the connection that runs it."""
        from picode.session.mcp.extras import prompt_info

        return [
            (c, prompt_info(c.name, prompt))
            for c in self._connections
            if c.state == "ready"
            for prompt in c.prompts
        ]

    def resources(self) -> list[McpResource]:
        from picode.session.mcp.extras import resource_info

        return [
            resource_info(c.name, resource)
            for c in self._connections
            if c.state == "ready"
            for resource in c.resources
        ]

    def statuses(self) -> list[McpServerStatus]:
        by_server: dict[str, list[str]] = {}
        for tool in self.tools():
            by_server.setdefault(tool.connection.name, []).append(tool.name)
        return [c.status(tuple(by_server.get(c.name, ()))) for c in self._connections]


def _read_only(tool: types.Tool) -> bool:
    """The server says the tool changes nothing (a hint: trusted as far as the server is)."""
    return tool.annotations is not None and tool.annotations.read_only_hint is True


def _task_only(tool: types.Tool) -> bool:
    """A tool the server runs only as an MCP task, which picode does not speak: a plain call
    would always fail (-32601), so it is not offered."""
    execution = tool.execution
    return execution is not None and execution.task_support == "required"
