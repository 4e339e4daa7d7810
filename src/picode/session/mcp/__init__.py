"""MCP client: the configured servers' tools offered to the model (docs/mcp.md).

Importing this package is cheap; the ``mcp`` SDK is imported by ``connection`` only, which
the session loads when at least one server is enabled.
"""

from __future__ import annotations

from picode.session.mcp.browser import open_browser
from picode.session.mcp.elicitation import (
    ElicitationAnswer,
    ElicitationRequest,
    ElicitField,
    Value,
    convert,
)
from picode.session.mcp.status import (
    McpLoginError,
    McpPrompt,
    McpPromptError,
    McpResource,
    McpServerStatus,
    McpState,
    tool_display_name,
)

__all__ = [
    "ElicitField",
    "ElicitationAnswer",
    "ElicitationRequest",
    "McpLoginError",
    "McpPrompt",
    "McpPromptError",
    "McpResource",
    "McpServerStatus",
    "McpState",
    "Value",
    "convert",
    "open_browser",
    "tool_display_name",
]
