"""The session's MCP commands: logins and who answers a server's questions; a part of
``AgentSession`` (docs/mcp.md "OAuth", "Elicitation")."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from picode.ai.untrusted import one_line
from picode.session.mcp.elicitation import ElicitationAnswer, ElicitationRequest, Elicitor
from picode.session.mcp.status import McpLoginError

if TYPE_CHECKING:
    from picode.session.mcp.connection import McpConnection
    from picode.session.mcp.manager import McpManager
    from picode.session.models.auth import AuthStore
    from picode.session.models.credentials import Credentials

#: Shows the person the authorization URL (a front end also opens the browser).
ShowUrl = Callable[[str], Awaitable[None] | None]


@dataclass(frozen=True, slots=True)
class McpHooks:
    """What the servers' connections call back into the session for."""

    auth: AuthStore | None = None
    elicit: Elicitor | None = None


class McpControls:
    _mcp: McpManager | None
    _credentials: Credentials
    _elicitor: Elicitor | None = None

    if TYPE_CHECKING:

        def notify(self, text: str, level: str = "info", source: str | None = None) -> None: ...

    async def mcp_login(self, name: str, show_url: ShowUrl) -> None:
        """Log in to the HTTP server ``name`` (OAuth in the browser: ``show_url`` gets the
        address), store its tokens and connect to it again. Raises ``McpLoginError``."""
        await self._mcp_connection(name).login(show_url)

    async def mcp_logout(self, name: str) -> str:
        """Forget and revoke the tokens of ``name``; what happened, for the person.
        Raises ``McpLoginError``."""
        return await self._mcp_connection(name).logout()

    def set_elicitor(self, elicitor: Elicitor | None) -> None:
        """Who answers an MCP server's request for input (the front end's form); without
        one, requests are declined with a notice."""
        self._elicitor = elicitor

    def _mcp_hooks(self) -> McpHooks:
        return McpHooks(self._credentials.auth, self._elicit)

    async def _elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        if self._elicitor is None:
            self.notify(
                f"MCP server '{request.server}' asked for input and was declined: nothing "
                f"here can ask you ({one_line(request.message, 200)})",
                "warning",
                "mcp",
            )
            return ElicitationAnswer("decline")
        return await self._elicitor(request)

    def _mcp_connection(self, name: str) -> McpConnection:
        connection = self._mcp.connection(name) if self._mcp is not None else None
        if connection is None:
            raise McpLoginError(f"no MCP server named '{name}' in this session (see /mcp)")
        return connection
