"""OAuth for HTTP MCP servers (docs/mcp.md "OAuth"), through the SDK's ``OAuthClientProvider``.

The SDK does discovery, registration, PKCE, the token exchange and refreshing; picode adds
where the tokens live (the auth file, next to the API keys: ``mcp:<server>``), the loopback
listener the browser comes back to, and the rule that only a login the person asked for
(``picode mcp login``, ``/mcp login``) opens a browser: a session's connection that meets a
401 it cannot refresh its way out of reports "needs login" instead.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, cast
from urllib.parse import quote

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.utils import (
    extract_field_from_www_auth,
    extract_resource_metadata_from_www_auth,
    extract_scope_from_www_auth,
    union_scopes,
)
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientMetadata,
)

from picode import __version__
from picode.session.config.mcp import McpOAuth, McpServer
from picode.session.mcp.loopback import LoopbackListener
from picode.session.mcp.status import McpLoginError as LoginError
from picode.session.mcp.tokens import McpTokenStore, auth_key
from picode.session.models.auth import AuthStore

log = logging.getLogger(__name__)

#: How long a login waits for the browser to come back.
LOGIN_TIMEOUT_S = 300.0

#: Shows the person the authorization URL (and opens their browser); called once per login.
ShowUrl = Callable[[str], Awaitable[None] | None]


class NeedsLogin(Exception):
    """The server wants an authorization only a login the person starts can give."""


def _refused(response: httpx2.Response) -> bool:
    """401, or 403 asking for more scope: what only an authorization answers."""
    if response.status_code == 401:
        return True
    return (
        response.status_code == 403
        and extract_field_from_www_auth(response, "error") == "insufficient_scope"
    )


class _Provider(OAuthClientProvider):
    """The SDK's provider, with picode's rules around it: stored tokens carry their expiry
    (the SDK knows only that of tokens it fetched itself); a token refused early is
    refreshed before anyone is asked; a session's connection never authorizes (it reports
    "needs login" and remembers the scope asked for); a login always authorizes, for every
    scope wanted so far; a configured client's secret goes as the server takes it."""

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
        self._must_authorize = interactive
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
                if self._interactive and self._must_authorize:
                    # A login the person asked for authorizes, even where the server let
                    # this request through (it may guard only some methods), and asks for
                    # every scope wanted so far.
                    self._must_authorize = False
                    outgoing = await flow.asend(self._challenge(request, response))
                    continue
                if response.status_code == 401 and not retried and self._can_refresh():
                    # A token refused before its time (revoked, the server restarted): the
                    # SDK would start a new authorization; refreshing first needs no person.
                    retried = True
                    await flow.aclose()
                    self.context.token_expiry_time = 1.0
                    flow = super()._auth_flow(request)
                    outgoing = await flow.__anext__()
                    continue
                if _refused(response) and not self._interactive:
                    self._store.want_scope(extract_scope_from_www_auth(response))
                    raise NeedsLogin(self._store.server)
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        except Exception as exc:
            self._on_failure(exc)
            raise
        finally:
            await flow.aclose()

    def _challenge(self, request: httpx2.Request, response: httpx2.Response) -> httpx2.Response:
        refused = _refused(response)
        metadata = extract_resource_metadata_from_www_auth(response) if refused else None
        scope: str | None = extract_scope_from_www_auth(response) if refused else None
        for more in (*self._store.wanted_scopes(), " ".join(self._store.login.scopes or ())):
            scope = union_scopes(scope, more or None)
        parts = [f'resource_metadata="{metadata}"'] if metadata else []
        if scope:
            parts.append(f'scope="{scope}"')
        header = "Bearer " + ", ".join(parts) if parts else "Bearer"
        return httpx2.Response(401, headers={"WWW-Authenticate": header}, request=request)

    async def _exchange_token_authorization_code(
        self, auth_code: str, code_verifier: str
    ) -> httpx2.Request:
        self._secret_method()
        return await super()._exchange_token_authorization_code(auth_code, code_verifier)

    async def _refresh_token(self) -> httpx2.Request:
        self._secret_method()
        return await super()._refresh_token()

    def _secret_method(self) -> None:
        """A configured client secret goes the way the authorization server takes it:
        HTTP Basic unless it only lists client_secret_post (RFC 8414: Basic by default)."""
        client = self.context.client_info
        if client is None or not client.client_secret or not self._store.login.client_id:
            return
        metadata = self.context.oauth_metadata
        offered = (metadata.token_endpoint_auth_methods_supported if metadata else None) or []
        basic = "client_secret_basic" in offered or "client_secret_post" not in offered
        client.token_endpoint_auth_method = self._store.login.secret_method or (
            "client_secret_basic" if basic else "client_secret_post"
        )
        self._store.save_secret_method(client.token_endpoint_auth_method)

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


async def login(
    name: str, config: McpServer, auth: AuthStore, show: ShowUrl, timeout: float = LOGIN_TIMEOUT_S
) -> None:
    """Authorize picode for server ``name`` in the browser and store the tokens.

    Raises ``LoginError`` with a message for the person."""
    from picode.session.mcp.transport import describe_error, handshake, innermost

    store = McpTokenStore(auth, name, config)
    store.ignore_tokens = True
    store.login_running = True
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
    kept = {k: v for k, v in entry.items() if k in ("url", "client", "revocation", "secret_method")}
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
    method = entry.get("secret_method") or client.get("token_endpoint_auth_method")
    basic = bool(secret) and method == "client_secret_basic"
    problems: list[str] = []
    async with httpx2.AsyncClient(timeout=config.timeout_s) as http:
        for hint in ("refresh_token", "access_token"):
            token = tokens.get(hint)
            if not isinstance(token, str):
                continue
            data = {"token": token, "token_type_hint": hint, "client_id": str(client_id or "")}
            if not basic:
                # A public client's secret is the empty string, which RFC 6749 (2.3.1) lets
                # it send; some servers (the SDK's own) insist on the field.
                data.update(client_id=str(client_id or ""), client_secret=str(secret or ""))
            headers = {}
            if basic:
                pair = f"{quote(str(client_id), safe='')}:{quote(str(secret), safe='')}"
                headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
            try:
                response = await http.post(endpoint, data=data, headers=headers)
            except httpx2.HTTPError as exc:
                problems.append(f"{type(exc).__name__}")
                continue
            if response.status_code >= 400:
                problems.append(f"HTTP {response.status_code}")
    return ", ".join(problems) or None
