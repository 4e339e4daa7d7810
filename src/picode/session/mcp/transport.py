"""What a connection stands on: the transports, the read stream it watches, error text."""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TextIO, TypeVar, cast

import anyio
from mcp import ClientSession, types
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from picode import __version__
from picode.session.config.mcp import McpServer
from picode.session.mcp.negotiate import negotiate

if TYPE_CHECKING:
    import httpx2

#: Shown with a failure: the end of what the server wrote to stderr.
_STDERR_TAIL = 600


@contextlib.asynccontextmanager
async def http_transport(
    config: McpServer, auth: httpx2.Auth | None, on_response: Callable[[Any], Any] | None = None
) -> AsyncIterator[tuple[Any, Any]]:
    """The streams of an http or sse server, through ``auth`` (OAuth) when given."""
    from mcp.shared._httpx_utils import create_mcp_http_client

    assert config.url is not None
    if config.kind == "http":
        from mcp.client.streamable_http import streamable_http_client

        async with create_mcp_http_client(headers=config.headers or None, auth=auth) as client:
            if on_response is not None:
                # The SDK answers an HTTP error with a generic JSON-RPC error: keep the status.
                client.event_hooks["response"].append(on_response)
            async with streamable_http_client(config.url, http_client=client) as streams:
                yield streams
    else:
        from mcp.client.sse import sse_client

        async with sse_client(config.url, headers=config.headers or None, auth=auth) as streams:
            yield streams


async def handshake(config: McpServer, auth: httpx2.Auth) -> None:
    """Connect and initialize once, through ``auth``: what a login needs to be asked for."""
    async with (
        http_transport(config, auth) as (read, write),
        ClientSession(
            read, write, client_info=types.Implementation(name="picode", version=__version__)
        ) as session,
    ):
        await negotiate(session)


class WatchedStream:
    """The transport's read stream, telling us when it ends (the server went away)."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            item: SessionMessage | Exception = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_end()
            raise
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        self._on_end()
        await self._inner.aclose()
        return None


_Page = TypeVar("_Page", bound=types.PaginatedResult)
_Item = TypeVar("_Item")


async def every_page(
    fetch: Callable[..., Awaitable[_Page]], items: Callable[[_Page], Sequence[_Item]]
) -> list[_Item]:
    """What a paginated list request returns, page after page (``fetch(params=...)``)."""
    found: list[_Item] = []
    cursor: str | None = None
    while True:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await fetch(params=params)
        found.extend(items(page))
        cursor = page.next_cursor
        if not cursor:
            return found


async def list_tools(session: ClientSession) -> list[types.Tool]:
    return await every_page(session.list_tools, lambda page: page.tools)


def innermost(exc: BaseException) -> BaseException:
    """What went wrong, out of the groups the SDK's task groups wrap it in."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe_error(exc: BaseException) -> str:
    exc = innermost(exc)
    if isinstance(exc, MCPError):
        return exc.error.message
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def http_reason(status: int | None) -> str | None:
    """What an HTTP error status at connection time means for the person."""
    if status in (401, 403):
        return (
            f"HTTP {status}: the server needs authorisation; give its token in headers "
            '(headers = { Authorization = "Bearer …" }) or let picode log in (oauth)'
        )
    if status is not None:
        return f"HTTP {status} from the server"
    return None


def stderr_file() -> TextIO:
    """Where a stdio server's stderr goes: never the terminal (it would tear the TUI's
    screen); its end explains a failure."""
    try:
        return cast(TextIO, tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"))
    except OSError:
        return open(os.devnull, "w", encoding="utf-8")  # closed by _serve


def stderr_tail(stderr: TextIO | None) -> str:
    if stderr is None:
        return ""
    try:
        stderr.flush()
        stderr.seek(0)
        text = stderr.read()[-_STDERR_TAIL:].strip()
    except (OSError, ValueError):
        return ""
    return f" (stderr: {text})" if text else ""


class CallClocks:
    """The deadlines of a server's running calls, stopped while it waits on the person
    (an elicitation): a form filled in for two minutes must not time the call out."""

    def __init__(self) -> None:
        self._scopes: set[anyio.CancelScope] = set()
        self._left: dict[anyio.CancelScope, float] = {}
        self._paused = 0

    @contextlib.contextmanager
    def call(self, timeout: float) -> Iterator[anyio.CancelScope]:
        """A scope that is cancelled once the call has run ``timeout`` seconds."""
        with anyio.CancelScope() as scope:
            if self._paused:
                self._left[scope] = timeout
            else:
                scope.deadline = anyio.current_time() + timeout
            self._scopes.add(scope)
            try:
                yield scope
            finally:
                self._scopes.discard(scope)
                self._left.pop(scope, None)

    @contextlib.contextmanager
    def person(self) -> Iterator[None]:
        if not self._paused:
            now = anyio.current_time()
            for scope in self._scopes:
                self._left[scope] = scope.deadline - now
                scope.deadline = math.inf
        self._paused += 1
        try:
            yield
        finally:
            self._paused -= 1
            if not self._paused:
                now = anyio.current_time()
                for scope in self._scopes:
                    scope.deadline = now + self._left.pop(scope, 0.0)
