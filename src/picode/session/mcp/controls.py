"""The session's MCP login commands: a part of ``AgentSession`` (docs/mcp.md "OAuth")."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from picode.session.mcp.status import McpLoginError

if TYPE_CHECKING:
    from picode.session.mcp.connection import McpConnection
    from picode.session.mcp.manager import McpManager

#: Shows the person the authorization URL (a front end also opens the browser).
ShowUrl = Callable[[str], Awaitable[None] | None]


class McpControls:
    _mcp: McpManager | None

    async def mcp_login(self, name: str, show_url: ShowUrl) -> None:
        """Log in to the HTTP server ``name`` (OAuth in the browser: ``show_url`` gets the
        address), store its tokens and connect to it again. Raises ``McpLoginError``."""
        await self._mcp_connection(name).login(show_url)

    async def mcp_logout(self, name: str) -> str:
        """Forget and revoke the tokens of ``name``; what happened, for the person.
        Raises ``McpLoginError``."""
        return await self._mcp_connection(name).logout()

    def _mcp_connection(self, name: str) -> McpConnection:
        connection = self._mcp.connection(name) if self._mcp is not None else None
        if connection is None:
            raise McpLoginError(f"no MCP server named '{name}' in this session (see /mcp)")
        return connection
