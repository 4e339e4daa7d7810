"""``/mcp``: the servers, their states and logins; ``/mcp login NAME``, ``/mcp logout NAME``
(docs/mcp.md "OAuth")."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from picode.ai.untrusted import one_line
from picode.session.mcp import McpLoginError, open_browser
from picode.tui.completion.commands import SlashCommand
from picode.tui.controllers.command_error import CommandError, session_of
from picode.tui.widgets.info import InfoView

if TYPE_CHECKING:
    from picode.session.agent_session import AgentSession
    from picode.session.mcp import McpPrompt
    from picode.tui.completion.commands import CommandRegistry
    from picode.tui.controllers.host import CommandHost, Reporter

USAGE = "/mcp lists the servers; /mcp login NAME and /mcp logout NAME log in to one (OAuth)."


class McpPromptCommands:
    """Keeps the registry's MCP prompt commands those the session's servers offer now (they
    come and go as servers connect)."""

    def __init__(self, reporter: Reporter, registry: CommandRegistry) -> None:
        self._reporter = reporter
        self._registry = registry
        self._names: list[str] = []
        self._offered: list[McpPrompt] = []

    def sync(self, session: AgentSession | None) -> None:
        prompts = session.mcp_prompts() if session is not None else []
        if prompts == self._offered:
            return
        self._offered = prompts
        for name in self._names:
            self._registry.remove(name)
        self._names = []
        for prompt in prompts:
            # The server's words: one escaped line each.
            command = SlashCommand(
                prompt.command,
                one_line(prompt.description, 80),
                one_line(prompt.usage, 40) or None,
                "template",  # sent as a message: the session runs the prompt
            )
            try:
                self._registry.add(command)
            except ValueError as exc:
                self._reporter.report(f"MCP prompt /{prompt.command}: {exc}", "warning")
                continue
            self._names.append(prompt.command)


class McpCommands:
    def __init__(self, host: CommandHost) -> None:
        self.host = host

    async def run(self, argument: str) -> None:
        words = argument.split()
        if not words:
            self.list()
        elif words[0] in ("login", "logout") and len(words) == 2:
            await (self.login if words[0] == "login" else self.logout)(words[1])
        else:
            raise CommandError(USAGE)

    def list(self) -> None:
        servers = session_of(self.host).mcp_servers()
        if not servers:
            self.host.report(
                "No MCP servers are configured: add [mcp.servers.NAME] to config.toml "
                "or run picode mcp add."
            )
            return
        lines: list[str | tuple[str, str]] = []
        for status in servers:
            login = f" · {status.login}" if status.login else ""
            lines.append((status.name, f"{status.summary} · {status.transport}{login}"))
            if status.tools:
                short = [name.rpartition("__")[2] for name in status.tools]
                lines.append(("", ", ".join(short)))
        self.host.transcript.add(InfoView("MCP servers", lines))

    async def login(self, name: str) -> None:
        session = session_of(self.host)

        async def show(url: str) -> None:
            # webbrowser can take a moment (it may start the browser): not on the UI's loop.
            opened = await asyncio.to_thread(open_browser, url)
            how = "a browser tab opened for it" if opened else "open this address in a browser"
            self.host.report(f"Log in to '{name}': {how}: {url}")

        try:
            await session.mcp_login(name, show)
        except McpLoginError as exc:
            raise CommandError(f"/mcp login {name}: {exc}") from None
        self.host.report(f"Logged in to '{name}'.")

    async def logout(self, name: str) -> None:
        try:
            self.host.report(await session_of(self.host).mcp_logout(name))
        except McpLoginError as exc:
            raise CommandError(f"/mcp logout {name}: {exc}") from None
