"""One MCP server: its connection, its tools, its state (the ``mcp`` SDK lives here).

Each connection attempt is one asyncio task that enters the transport and the SDK's
``ClientSession`` and stays inside them until told to stop or until the server goes away:
the SDK's task groups must be entered and left by the same task. Tool calls are sent from
the callers' own tasks; cancelling one makes the SDK send ``notifications/cancelled``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import anyio
from mcp import ClientSession, types
from mcp.shared.exceptions import MCPError

from picode import __version__
from picode.agent.tool import ToolError
from picode.session.config.mcp import McpServer
from picode.session.mcp.negotiate import negotiate
from picode.session.mcp.status import McpLoginError, McpServerStatus, McpState
from picode.session.mcp.transport import (
    CallClocks,
    WatchedStream,
    describe_error,
    http_reason,
    http_transport,
    innermost,
    list_tools,
    stderr_file,
    stderr_tail,
)

if TYPE_CHECKING:
    import httpx2

    from picode.session.mcp.elicitation import Elicitor
    from picode.session.models.auth import AuthStore

log = logging.getLogger(__name__)

#: Stopping a server takes at most this long: the SDK closes its stdin, waits 2 s, sends
#: SIGTERM, waits 2 s more, then SIGKILL.
_STOP_S = 8.0

Changed = Callable[[], None]


class McpConnection:
    def __init__(
        self,
        name: str,
        config: McpServer,
        cwd: Path,
        on_change: Changed,
        auth: AuthStore | None = None,
        elicit: Elicitor | None = None,
    ) -> None:
        self.name = name
        #: Who answers the server's requests for input; None: declined.
        self.elicit = elicit
        self._clocks = CallClocks()
        #: Where OAuth tokens live; None: never log in.
        self.auth = auth
        self.config = config
        self.cwd = cwd
        self._on_change = on_change
        self.state: McpState = "connecting" if config.enabled else "disabled"
        self.error: str | None = None
        self.tools: list[types.Tool] = []
        self.prompts: list[types.Prompt] = []
        self.resources: list[types.Resource] = []
        self._session: ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        #: Settles when the current attempt is ready or has failed.
        self._settled: asyncio.Future[None] | None = None
        self._wake = asyncio.Event()
        self._connecting: anyio.CancelScope | None = None
        self._stopping = False
        self._refreshing: set[asyncio.Task[None]] = set()
        #: The last HTTP error status of the current attempt (http servers).
        self._http_error: int | None = None
        #: Why OAuth could not authorize the current attempt (NeedsLogin: only a login can).
        self._auth_failure: Exception | None = None

    def status(self, offered: tuple[str, ...]) -> McpServerStatus:
        return McpServerStatus(
            self.name, self.config.kind, self.state, offered, self.error, self._login_state()
        )

    def _login_state(self) -> str | None:
        if self.auth is None or self.config.login is None:
            return None
        entry = self.auth.entry(f"mcp:{self.name}")
        logged_in = entry.get("url") == self.config.url and bool(entry.get("tokens"))
        return "logged in" if logged_in else "not logged in"

    # --- OAuth ---------------------------------------------------------------------------

    async def login(self, show: Callable[[str], Any]) -> None:
        """Authorize picode in the browser (``show`` gets the URL), then connect again.
        Raises ``McpLoginError``."""
        from picode.session.mcp.oauth import login

        if self.auth is None or self.config.login is None:
            raise McpLoginError(self._no_login())
        await login(self.name, self.config, self.auth, show)
        await self.restart()

    async def logout(self) -> str:
        """Forget (and revoke) the tokens; the connection is made again without them."""
        from picode.session.mcp.oauth import logout

        if self.auth is None or self.config.login is None:
            raise McpLoginError(self._no_login())
        had, problem = await logout(self.name, self.config, self.auth)
        if not had:
            return f"Not logged in to '{self.name}'."
        await self.restart()
        if problem:
            return f"Logged out of '{self.name}' (the server did not revoke the tokens: {problem})."
        return f"Logged out of '{self.name}'."

    def _no_login(self) -> str:
        if self.config.kind == "stdio":
            return f"'{self.name}' is a stdio server: there is nothing to log in to."
        return f"'{self.name}' does not use OAuth (oauth = false, or an Authorization header)."

    async def restart(self) -> None:
        await self.stop()
        self._stopping = False
        self.start()

    # --- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        """Begin connecting unless an attempt is under way or the server is ready."""
        if not self.config.enabled or self._stopping:
            return
        if self._task is not None and not self._task.done():
            return
        loop = asyncio.get_running_loop()
        self._settled = loop.create_future()
        self._wake = asyncio.Event()
        self._set("connecting", None)
        self._task = loop.create_task(self._serve(self._settled), name=f"mcp:{self.name}")

    async def wait_settled(self) -> None:
        """Until the current attempt is ready or has failed (at most its timeout)."""
        if self._settled is not None:
            await asyncio.shield(self._settled)

    async def stop(self) -> None:
        self._stopping = True
        if self.state not in ("disabled", "failed", "timed_out", "needs_login"):
            self._set("stopped", None)
        self._wake.set()
        if self._connecting is not None:
            self._connecting.cancel()
        for refresh in list(self._refreshing):
            refresh.cancel()
        task = self._task
        if task is None or task.done():
            return
        done, _ = await asyncio.wait({task}, timeout=_STOP_S)
        if not done:
            task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait({task}, timeout=1.0)

    def _set(self, state: McpState, error: str | None) -> None:
        self.state, self.error = state, error
        self._on_change()

    async def _serve(self, settled: asyncio.Future[None]) -> None:
        timeout = self.config.timeout_s
        ready = False
        stderr = stderr_file() if self.config.kind == "stdio" else None
        cwd = self._server_cwd()
        self._http_error = None
        self._auth_failure = None
        try:
            async with self._transport(stderr, cwd) as (read, write):
                watched = WatchedStream(read, self._wake.set)
                async with ClientSession(
                    watched,
                    write,
                    message_handler=self._on_message,
                    elicitation_callback=self._on_elicit if self.elicit else None,
                    client_info=types.Implementation(name="picode", version=__version__),
                ) as session:
                    # Our own scope, so that stop() ends a handshake that hangs; cancelling
                    # the task instead would cut short the SDK's shutdown of the server.
                    with anyio.CancelScope() as connecting:
                        self._connecting = connecting
                        with anyio.fail_after(timeout):
                            offers = await negotiate(session)
                            tools = await list_tools(session)
                            await self._list_extras(session, offers)
                    self._connecting = None
                    if self._stopping:
                        return
                    if connecting.cancelled_caught:
                        self._set(*self._auth_state())
                        return
                    self._session, self.tools, ready = session, tools, True
                    self._set("ready", None)
                    settled.set_result(None)
                    await self._wake.wait()
                    # Said before the streams and the process are closed (seconds, for a
                    # stdio server): a call meanwhile must start a new one, not find "ready".
                    self._session = None
                    if not self._stopping:
                        self._set(*self._gone())
            if not self._stopping and self.state not in ("disconnected", "needs_login"):
                self._set(*self._gone())
        except Exception as exc:  # whatever the transport or the server did: shown, not raised
            if self._auth_failure is not None and not self._stopping:
                self._set(*self._auth_state())
            elif isinstance(innermost(exc), TimeoutError) and not ready:
                self._set("timed_out", f"no answer within {timeout:g} s")
            elif not self._stopping:
                text = http_reason(self._http_error) or describe_error(exc)
                text += stderr_tail(stderr)
                self._set("disconnected" if ready else "failed", text)
                log.debug("mcp server %s: %s", self.name, text, exc_info=True)
        finally:
            self._session = None
            self._connecting = None
            if not settled.done():
                settled.set_result(None)
            if stderr is not None:
                stderr.close()

    def _auth_state(self) -> tuple[McpState, str]:
        from picode.session.mcp.oauth import NeedsLogin

        if isinstance(self._auth_failure, NeedsLogin):
            return "needs_login", (
                f"run /mcp login {self.name} (or picode mcp login {self.name}) to authorize picode"
            )
        return "failed", f"OAuth: {describe_error(self._auth_failure or Exception())}"

    def _on_auth_failure(self, exc: Exception) -> None:
        """The OAuth flow failed inside the transport, which only logs it: stop waiting for
        an answer that will not come."""
        self._auth_failure = exc
        if self._connecting is not None:
            self._connecting.cancel()
        elif self._session is not None:
            self._session = None
            self._set(*self._auth_state())
            self._wake.set()

    def _gone(self) -> tuple[McpState, str]:
        if self._auth_failure is not None:
            return self._auth_state()
        return "disconnected", "the server closed the connection"

    def _oauth(self) -> httpx2.Auth | None:
        if self.auth is None or self.config.login is None:
            return None
        from picode.session.mcp.oauth import session_auth

        return session_auth(self.name, self.config, self.auth, self._on_auth_failure)

    @contextlib.asynccontextmanager
    async def _transport(self, stderr: TextIO | None, cwd: Path) -> AsyncIterator[tuple[Any, Any]]:
        config = self.config
        if config.kind != "stdio":
            async with http_transport(config, self._oauth(), self._note_http_status) as streams:
                yield streams
            return
        if config.kind == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            assert config.command is not None
            assert stderr is not None
            params = StdioServerParameters(
                command=config.command, args=config.args, env=config.env or None, cwd=cwd
            )
            async with stdio_client(params, errlog=stderr) as streams:
                yield streams

    async def _note_http_status(self, response: Any) -> None:
        if response.status_code >= 400:
            self._http_error = response.status_code

    def _server_cwd(self) -> Path:
        """The config's ``cwd`` (relative to the project), else the project folder."""
        if not self.config.cwd:
            return self.cwd
        folder = Path(self.config.cwd).expanduser()
        return folder if folder.is_absolute() else self.cwd / folder

    # --- notifications -------------------------------------------------------------------

    async def _on_message(self, message: Any) -> None:
        if isinstance(
            message, types.PromptListChangedNotification | types.ResourceListChangedNotification
        ):
            task = asyncio.get_running_loop().create_task(self._refresh_extras())
            self._refreshing.add(task)
            task.add_done_callback(self._refreshing.discard)
        elif isinstance(message, types.ToolListChangedNotification):
            # Listing from inside the handler could hold up the reader that must deliver
            # the answer; a task of its own cannot.
            task = asyncio.get_running_loop().create_task(self._refresh_tools())
            self._refreshing.add(task)
            task.add_done_callback(self._refreshing.discard)
        elif isinstance(message, Exception):
            log.debug("mcp server %s: transport error: %s", self.name, message)

    async def _on_elicit(
        self, context: Any, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        from picode.session.mcp.elicitation import ElicitationRequest, SchemaError, fields

        assert self.elicit is not None
        if isinstance(params, types.ElicitRequestURLParams):
            # URL mode sends the person to a page the server chose: not offered (the
            # capability says form only), so a server asking anyway is told no.
            return types.ErrorData(code=types.INVALID_PARAMS, message="URL elicitation unsupported")
        schema = params.requested_schema
        raw = schema if isinstance(schema, dict) else schema.model_dump(by_alias=True)
        try:
            form = fields(raw)
        except SchemaError as exc:
            return types.ErrorData(code=types.INVALID_PARAMS, message=f"picode: {exc}")
        with self._clocks.person():
            answer = await self.elicit(ElicitationRequest(self.name, params.message, form))
        if answer.action != "accept":
            return types.ElicitResult(action=answer.action)
        return types.ElicitResult(action="accept", content=dict(answer.content))

    async def _list_extras(self, session: ClientSession, offers: types.ServerCapabilities) -> None:
        """The server's prompts and resources: a server that fails to list them still
        offers its tools."""
        from picode.session.mcp.extras import list_prompts, list_resources

        try:
            self.prompts = await list_prompts(session) if offers.prompts else []
        except MCPError as exc:
            log.debug("mcp server %s: listing prompts failed: %s", self.name, exc)
        try:
            self.resources = await list_resources(session) if offers.resources else []
        except MCPError as exc:
            log.debug("mcp server %s: listing resources failed: %s", self.name, exc)

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> types.GetPromptResult:
        session = await self._connected()
        with anyio.fail_after(self.config.timeout_s):
            return await session.get_prompt(name, arguments)

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        session = await self._connected()
        with anyio.fail_after(self.config.timeout_s):
            return await session.read_resource(uri)

    async def _refresh_extras(self) -> None:
        session = self._session
        offers = session.server_capabilities if session is not None else None
        if session is None or offers is None:
            return
        with contextlib.suppress(Exception), anyio.fail_after(self.config.timeout_s):
            await self._list_extras(session, offers)
            self._on_change()

    async def _refresh_tools(self) -> None:
        session = self._session
        if session is None:
            return
        try:
            with anyio.fail_after(self.config.timeout_s):
                tools = await list_tools(session)
        except Exception as exc:
            log.debug("mcp server %s: listing tools again failed: %s", self.name, exc)
            return
        if session is self._session:
            self.tools = tools
            self._on_change()

    # --- calls ---------------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """Run ``tool``; a server that is not connected gets one new attempt first.

        Raises ``ToolError`` with a message the model can act on."""
        session = await self._connected()
        timeout = self.config.timeout_s
        try:
            # Our own clock, not the SDK's read timeout: it stops while the person answers
            # the server's question (elicitation).
            result: types.CallToolResult | None = None
            with self._clocks.call(timeout):
                result = await session.call_tool(tool, arguments)
        except MCPError as exc:
            if self.state == "needs_login":
                raise ToolError(
                    f"MCP server '{self.name}' needs a new login: {self.error}"
                ) from None
            if exc.code == types.CONNECTION_CLOSED:
                self._lost(session)
                raise ToolError(
                    f"MCP server '{self.name}' disconnected during {tool}; the next call "
                    "starts it again."
                ) from None
            if exc.code != types.REQUEST_TIMEOUT:
                raise ToolError(f"MCP server '{self.name}': {exc.error.message}") from None
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            self._lost(session)
            raise ToolError(
                f"MCP server '{self.name}' cannot be reached ({describe_error(exc)}); the next "
                "call starts it again."
            ) from None
        if result is None:
            raise ToolError(
                f"MCP server '{self.name}' did not answer {tool} within {timeout:g} s "
                "(timeout_s); the call was cancelled."
            )
        return result

    async def _connected(self) -> ClientSession:
        if self._session is not None:
            return self._session
        if self.state in ("failed", "timed_out", "disconnected", "needs_login"):
            old = self._task
            if old is not None and not old.done():
                # The last attempt is still winding down (closing its streams).
                await asyncio.wait({old}, timeout=_STOP_S)
            self.start()
        await self.wait_settled()
        session = self._session
        if session is None:
            raise ToolError(f"MCP server '{self.name}' is {self.status(()).summary}.")
        return session

    def _lost(self, session: ClientSession) -> None:
        """The connection is gone (an HTTP server need not close anything to be gone)."""
        if self._session is session:
            self._session = None
            self._set("disconnected", "the connection was lost")
            self._wake.set()
