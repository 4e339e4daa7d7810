"""The session's MCP commands: logins and who answers a server's questions; a part of
``AgentSession`` (docs/mcp.md "OAuth", "Elicitation")."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from picode.ai.untrusted import one_line
from picode.session.mcp.elicitation import ElicitationAnswer, ElicitationRequest, Elicitor
from picode.session.mcp.status import (
    TOOL_PREFIX,
    McpLoginError,
    McpPrompt,
    McpPromptError,
    McpResource,
)

if TYPE_CHECKING:
    from pathlib import Path

    from picode.ai.types import UserContent
    from picode.session.config.settings import Settings
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
    _settings: Settings
    _elicitor: Elicitor | None = None

    if TYPE_CHECKING:

        @property
        def cwd(self) -> Path: ...

        def notify(self, text: str, level: str = "info", source: str | None = None) -> None: ...

        def _mcp_changed(self) -> None: ...

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

    def _start_mcp(self) -> None:
        servers = self._settings.mcp.servers
        if not servers:
            return
        # The SDK is imported only now: a session without servers never loads it.
        from picode.session.mcp.manager import McpManager

        hooks = McpHooks(self._credentials.auth, self._elicit)
        self._mcp = McpManager(servers, self.cwd, self._mcp_changed, hooks)
        self._mcp.start()

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

    def mcp_prompts(self) -> list[McpPrompt]:
        """The ready servers' prompts: ``prompt("/mcp__<server>__<prompt> args")`` runs one."""
        return [] if self._mcp is None else [prompt for _, prompt in self._mcp.prompts()]

    def mcp_resources(self) -> list[McpResource]:
        """The ready servers' resources: ``@<server>:<uri>`` in a message attaches one."""
        return [] if self._mcp is None else self._mcp.resources()

    async def _mcp_message(
        self, text: str, attachments: Sequence[UserContent]
    ) -> tuple[str, Sequence[UserContent]]:
        """``/mcp__server__prompt args`` as the server's prompt, and the ``@server:uri``
        resources the text mentions after ``attachments``. Raises ``McpPromptError`` for a
        prompt that cannot be run (nothing is sent)."""
        if self._mcp is None:
            return text, attachments
        if text.startswith("/" + TOOL_PREFIX):
            text = await self._run_mcp_prompt(text)
        if "@" not in text:
            return text, attachments
        from picode.session.mcp.extras import resource_blocks, resource_mentions
        from picode.session.mcp.transport import describe_error

        names = [status.name for status in self._mcp.statuses()]
        found: list[UserContent] = []
        for server, uri in resource_mentions(text, names):
            connection = self._mcp.connection(server)
            assert connection is not None
            try:
                result = await connection.read_resource(uri)
            except Exception as exc:  # the server's problem: said, and the text still goes
                reason = one_line(describe_error(exc), 200)
                self.notify(f"@{server}:{uri} not attached: {reason}", "warning", "mcp")
                continue
            found += resource_blocks(server, uri, result)
        return text, [*attachments, *found]

    async def _run_mcp_prompt(self, text: str) -> str:
        from picode.session.mcp.extras import prompt_arguments, prompt_text
        from picode.session.mcp.transport import describe_error

        assert self._mcp is not None
        command, _, rest = text[1:].partition(" ")
        found = [(c, p) for c, p in self._mcp.prompts() if p.command == command.strip()]
        if not found:
            return text  # not a server's prompt: sent as typed
        connection, prompt = found[0]
        try:
            arguments = prompt_arguments(prompt, rest)
        except ValueError as exc:
            raise McpPromptError(str(exc)) from None
        try:
            result = await connection.get_prompt(prompt.name, arguments)
        except Exception as exc:
            raise McpPromptError(f"/{command}: {describe_error(exc)}") from None
        return prompt_text(result)

    def _mcp_connection(self, name: str) -> McpConnection:
        connection = self._mcp.connection(name) if self._mcp is not None else None
        if connection is None:
            raise McpLoginError(f"no MCP server named '{name}' in this session (see /mcp)")
        return connection
