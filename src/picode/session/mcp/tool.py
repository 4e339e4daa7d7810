"""An MCP server's tool as an ``AgentTool`` named ``mcp__<server>__<tool>``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from picode.agent.tool import OnUpdate, ToolResult, require_arguments
from picode.ai.abort import AbortSignal
from picode.session.mcp.connection import McpConnection
from picode.session.mcp.content import tool_result
from picode.session.mcp.status import TOOL_PREFIX, TOOL_SEPARATOR

#: What the providers accept as a tool name.
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME = 64


def model_tool_name(server: str, tool: str) -> str:
    """The name the model sees; characters providers refuse become ``_``."""
    return (TOOL_PREFIX + server + TOOL_SEPARATOR + _UNSAFE.sub("_", tool))[:MAX_NAME]


@dataclass(slots=True)
class McpTool:
    name: str
    label: str
    description: str
    parameters: dict[str, Any]
    #: The tool's own name on its server.
    tool: str
    connection: McpConnection
    #: The server annotated the tool ``readOnlyHint``: plan mode runs it.
    read_only: bool = False

    def validate(self, arguments: dict[str, Any]) -> Any:
        # The server validates against its schema; only what it surely refuses is caught here.
        return require_arguments(arguments, self.parameters.get("required") or ())

    async def execute(
        self, call_id: str, args: Any, signal: AbortSignal, on_update: OnUpdate
    ) -> ToolResult:
        # An abort cancels this task: the SDK then tells the server (notifications/cancelled).
        result = await self.connection.call(self.tool, dict(args))
        return tool_result(result, self.connection.name, self.tool)
