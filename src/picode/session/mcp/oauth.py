"""OAuth for HTTP MCP servers (docs/mcp.md "OAuth"), through the SDK's ``OAuthClientProvider``.

The SDK does discovery, registration, PKCE, the token exchange and refreshing; picode adds
where the tokens live (the auth file, next to the API keys: ``mcp:<server>``), the loopback
listener the browser comes back to, and the rule that only a login the person asked for
(``picode mcp login``, ``/mcp login``) opens a browser: a session's connection that meets a
401 it cannot refresh its way out of reports "needs login" instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, cast
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import ValidationError

from picode import __version__
from picode.session.config.mcp import McpOAuth, McpServer
from picode.session.mcp.status import McpLoginError as LoginError
from picode.session.models.auth import AuthStore
from picode.session.safety.secrets import remember_secret

log = logging.getLogger(__name__)

CALLBACK_PATH = "/callback"
#: How long a login waits for the browser to come back.
LOGIN_TIMEOUT_S = 300.0

#: Shows the person the authorization URL (and opens their browser); called once per login.
ShowUrl = Callable[[str], Awaitable[None] | None]


class NeedsLogin(Exception):
    """The server wants an authorization only a login the person starts can give."""


def auth_key(server: str) -> str:
    return f"mcp:{server}"


class McpTokenStore:
    """The SDK's ``TokenStorage`` over the auth file: ``{"url", "tokens", "expires_at",
    "client", "revocation"}`` under ``mcp:<server>``. Tokens saved for another URL are not
    sent to this one. Every secret read or written is remembered for redaction."""

    def __init__(
        self, auth: AuthStore, server: str, config: McpServer, *, persist: bool = True
    ) -> None:
        assert config.url is not None
        self.auth = auth
        self.server = server
        self.url = config.url
        self.login = config.login or McpOAuth()
        #: False while a session connects: a registration made on its way to "needs login"
        #: (for a redirect URI no listener serves) is not kept.
        self.persist = persist
        self.redirect_uri = "http://127.0.0.1/callback"
        #: A login starts from no tokens, so the server's 401 starts the authorization.
        self.ignore_tokens = False

    def _entry(self) -> dict[str, Any]:
        entry = self.auth.entry(auth_key(self.server))
        return entry if entry.get("url") == self.url else {}

    def _save(self, **changes: Any) -> None:
        entry = self._entry()
        entry.update(changes, url=self.url)
        self.auth.put(auth_key(self.server), {k: v for k, v in entry.items() if v is not None})

    def logged_in(self) -> bool:
        return bool(self._entry().get("tokens"))

    def expires_at(self) -> float | None:
        value = self._entry().get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    def stored_redirect_port(self) -> int | None:
        client = self._entry().get("client")
        uris = client.get("redirect_uris") if isinstance(client, dict) else None
        if not uris or not isinstance(uris[0], str):
            return None
        return urlsplit(uris[0]).port

    async def get_tokens(self) -> OAuthToken | None:
        raw = self._entry().get("tokens")
        if self.ignore_tokens or not isinstance(raw, dict):
            return None
        try:
            tokens = OAuthToken.model_validate(raw)
        except ValidationError:
            return None
        remember_secret(tokens.access_token)
        remember_secret(tokens.refresh_token)
        return tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        remember_secret(tokens.access_token)
        remember_secret(tokens.refresh_token)
        expires = time.time() + int(tokens.expires_in) if tokens.expires_in else None
        self.ignore_tokens = False
        self._save(tokens=tokens.model_dump(mode="json", exclude_none=True), expires_at=expires)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self.login.client_id:
            remember_secret(self.login.client_secret)
            method = "client_secret_post" if self.login.client_secret else "none"
            return OAuthClientInformationFull(
                client_id=self.login.client_id,
                client_secret=self.login.client_secret,
                redirect_uris=[self.redirect_uri],  # type: ignore[list-item]
                token_endpoint_auth_method=method,
            )
        raw = self._entry().get("client")
        if not isinstance(raw, dict):
            return None
        try:
            client = OAuthClientInformationFull.model_validate(raw)
        except ValidationError:
            return None
        remember_secret(client.client_secret)
        return client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if self.login.client_id or not self.persist:
            return
        remember_secret(client_info.client_secret)
        self._save(client=client_info.model_dump(mode="json", exclude_none=True))

    def forget_client(self) -> None:
        self._save(client=None)

    def save_revocation(self, endpoint: str | None) -> None:
        self._save(revocation=endpoint)


class _Provider(OAuthClientProvider):
    """The SDK's provider, told when stored tokens expire: it only knows the expiry of
    tokens it fetched itself, and would send a stale token instead of refreshing it."""

    def __init__(
        self,
        store: McpTokenStore,
        on_failure: Callable[[Exception], None],
        *,
        interactive: bool,
        **kwargs: Any,
    ) -> None:
        super().__init__(storage=store, **kwargs)
        self._store = store
        self._on_failure = on_failure
        #: False: a 401 that refreshing cannot answer is "needs login", with no discovery
        #: or registration on the way (those belong to the login the person starts).
        self._interactive = interactive

    async def _auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        # The transport only logs what goes wrong in here and leaves the request unanswered:
        # the connection is told, so that it need not wait for its timeout.
        flow = super()._auth_flow(request)
        retried = False
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                if response.status_code == 401 and not retried and self._can_refresh():
                    # A token refused before its time (revoked, the server restarted): the
                    # SDK would start a new authorization; refreshing first needs no person.
                    retried = True
                    await flow.aclose()
                    self.context.token_expiry_time = 1.0
                    flow = super()._auth_flow(request)
                    outgoing = await flow.__anext__()
                    continue
                if response.status_code in (401, 403) and not self._interactive:
                    raise NeedsLogin(self._store.server)
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        except Exception as exc:
            self._on_failure(exc)
            raise
        finally:
            await flow.aclose()

    def _can_refresh(self) -> bool:
        return self._initialized and self.context.can_refresh_token()

    async def _initialize(self) -> None:
        await super()._initialize()
        if self.context.current_tokens is not None:
            self.context.token_expiry_time = self._store.expires_at()

    @property
    def revocation_endpoint(self) -> str | None:
        metadata = self.context.oauth_metadata
        endpoint = metadata.revocation_endpoint if metadata is not None else None
        return str(endpoint) if endpoint else None


def _metadata(store: McpTokenStore) -> OAuthClientMetadata:
    scopes = store.login.scopes
    return OAuthClientMetadata(
        client_name="picode",
        software_id="picode",
        software_version=__version__,
        redirect_uris=[store.redirect_uri],  # type: ignore[list-item]
        scope=" ".join(scopes) if scopes else None,
        token_endpoint_auth_method="client_secret_post" if store.login.client_secret else "none",
    )


def session_auth(
    name: str, config: McpServer, auth: AuthStore, on_failure: Callable[[Exception], None]
) -> httpx2.Auth:
    """The auth a session's connection uses: stored tokens, refreshed when they expire;
    a 401 that needs the browser fails with ``NeedsLogin`` (given to ``on_failure``)."""
    store = McpTokenStore(auth, name, config, persist=False)

    assert config.url is not None
    return _Provider(
        store,
        on_failure,
        interactive=False,
        server_url=config.url,
        client_metadata=_metadata(store),
    )


class LoopbackListener:
    """``http://127.0.0.1:PORT/callback``: where the browser brings the authorization code."""

    def __init__(self, server_name: str) -> None:
        self._name = server_name
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None
        self.port = 0

    async def start(self, port: int) -> None:
        self._result = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", port)
        self.port = self._server.sockets[0].getsockname()[1]

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def wait(self) -> AuthorizationCodeResult:
        assert self._result is not None
        return await asyncio.shield(self._result)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), 10)
            with contextlib.suppress(Exception):
                while (await asyncio.wait_for(reader.readline(), 10)).strip():
                    pass
            status, page = self._answer(line.decode("latin-1"))
            body = f"<!doctype html><title>picode</title><p>{page}</p>".encode()
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        except (OSError, TimeoutError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    def _answer(self, request_line: str) -> tuple[str, str]:
        parts = request_line.split()
        target = urlsplit(parts[1]) if len(parts) >= 2 and parts[0] == "GET" else None
        if target is None or target.path != CALLBACK_PATH:
            return "404 Not Found", "Not found."
        query = {key: values[0] for key, values in parse_qs(target.query).items()}
        result = self._result
        if result is None or result.done():
            return "409 Conflict", "This login is already over; you can close this tab."
        if "error" in query:
            reason = query["error"]
            if query.get("error_description"):
                reason += f": {query['error_description']}"
            result.set_exception(LoginError(f"the authorization server refused: {reason}"))
            return "400 Bad Request", "The login was refused; see picode for details."
        if "code" not in query:
            return "400 Bad Request", "No authorization code in this request."
        result.set_result(
            AuthorizationCodeResult(
                code=query["code"], state=query.get("state"), iss=query.get("iss")
            )
        )
        return "200 OK", "picode is logged in. You can close this tab."


async def login(
    name: str, config: McpServer, auth: AuthStore, show: ShowUrl, timeout: float = LOGIN_TIMEOUT_S
) -> None:
    """Authorize picode for server ``name`` in the browser and store the tokens.

    Raises ``LoginError`` with a message for the person."""
    from picode.session.mcp.transport import describe_error, handshake, innermost

    store = McpTokenStore(auth, name, config)
    store.ignore_tokens = True
    listener = LoopbackListener(name)
    await _listen(listener, store)
    store.redirect_uri = listener.redirect_uri

    async def redirect(url: str) -> None:
        shown = show(url)
        if shown is not None:
            await shown

    async def callback() -> AuthorizationCodeResult:
        try:
            return await asyncio.wait_for(listener.wait(), timeout)
        except TimeoutError:
            raise LoginError(f"no answer from the browser within {timeout:g} s") from None

    failed: asyncio.Future[Exception] = asyncio.get_running_loop().create_future()

    def on_failure(exc: Exception) -> None:
        if not failed.done():
            failed.set_result(exc)

    assert config.url is not None
    provider = _Provider(
        store,
        on_failure,
        interactive=True,
        server_url=config.url,
        client_metadata=_metadata(store),
        redirect_handler=redirect,
        callback_handler=callback,
    )
    connecting: asyncio.Future[Any] = asyncio.ensure_future(handshake(config, provider))
    cause: BaseException | None = None
    try:
        waited = timeout + 2 * config.timeout_s
        await asyncio.wait({connecting, failed}, timeout=waited, return_when="FIRST_COMPLETED")
        if failed.done():
            cause = failed.result()
        elif not connecting.done():
            cause = LoginError(f"no answer from '{name}' within {waited:g} s")
        elif connecting.exception() is not None:
            cause = innermost(cast(BaseException, connecting.exception()))
    finally:
        connecting.cancel()
        with contextlib.suppress(BaseException):
            await connecting
        failed.cancel()
        await listener.close()
    if isinstance(cause, LoginError):
        raise cause
    if cause is not None:
        raise LoginError(f"cannot log in to '{name}': {describe_error(cause)}")
    if not store.logged_in():
        raise LoginError(f"'{name}' did not ask for a login: it answers without one")
    store.save_revocation(provider.revocation_endpoint)


async def _listen(listener: LoopbackListener, store: McpTokenStore) -> None:
    """Bind the port the stored registration names, so it can be used again; a port in use
    (or none stored) means a free one, and registering again for it."""
    stored = store.stored_redirect_port() if not store.login.client_id else None
    wanted = store.login.redirect_port or stored or 0
    try:
        await listener.start(wanted)
    except OSError as exc:
        if store.login.redirect_port:
            raise LoginError(
                f"cannot listen on 127.0.0.1:{wanted} (redirect_port): {exc.strerror or exc}"
            ) from None
        await listener.start(0)
    if stored is not None and stored != listener.port:
        store.forget_client()


async def logout(name: str, config: McpServer, auth: AuthStore) -> tuple[bool, str | None]:
    """Forget the server's tokens and ask its authorization server to revoke them.

    Returns whether there was a login, and why revoking failed (None when it worked or the
    server offers no revocation)."""
    key = auth_key(name)
    entry = auth.entry(key)
    tokens = entry.get("tokens")
    if not isinstance(tokens, dict):
        if entry:
            auth.remove(key)
        return False, None
    problem = await _revoke(entry, config)
    # The registration stays (a new login reuses it); the tokens go.
    kept = {k: v for k, v in entry.items() if k in ("url", "client", "revocation")}
    auth.put(key, kept)
    return True, problem


async def _revoke(entry: dict[str, Any], config: McpServer) -> str | None:
    endpoint = entry.get("revocation")
    if not isinstance(endpoint, str):
        return None
    tokens = entry["tokens"]
    stored = entry.get("client")
    client: dict[str, Any] = stored if isinstance(stored, dict) else {}
    login = config.login or McpOAuth()
    client_id = login.client_id or client.get("client_id")
    secret = login.client_secret or client.get("client_secret")
    problems: list[str] = []
    async with httpx2.AsyncClient(timeout=config.timeout_s) as http:
        for hint in ("refresh_token", "access_token"):
            token = tokens.get(hint)
            if not isinstance(token, str):
                continue
            # A public client's secret is the empty string, which RFC 6749 (2.3.1) lets it
            # send; some servers (the SDK's own) insist on the field.
            data = {
                "token": token,
                "token_type_hint": hint,
                "client_id": client_id,
                "client_secret": secret or "",
            }
            try:
                response = await http.post(endpoint, data=data)
            except httpx2.HTTPError as exc:
                problems.append(f"{type(exc).__name__}")
                continue
            if response.status_code >= 400:
                problems.append(f"HTTP {response.status_code}")
    return ", ".join(problems) or None
