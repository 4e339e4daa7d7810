"""Where an MCP server's OAuth tokens live: the auth file, next to the API keys."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlsplit

from mcp.client.auth.utils import union_scopes
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import ValidationError

from picode.session.config.mcp import McpOAuth, McpServer
from picode.session.models.auth import AuthStore
from picode.session.safety.secrets import remember_secret


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
        self.login_running = False

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
        fields = tokens.model_dump(mode="json", exclude_none=True)
        # What was wanted is asked for by this login; a refresh keeps the wish.
        wanted = None if self.persist and self.login_running else self._entry().get("wanted_scope")
        self._save(tokens=fields, expires_at=expires, wanted_scope=wanted)

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

    def want_scope(self, scope: str | None) -> None:
        """A server asked for ``scope``: the next login asks for it too."""
        wanted = self._entry().get("wanted_scope")
        merged = union_scopes(wanted if isinstance(wanted, str) else None, scope)
        if scope and merged != wanted:
            self._save(wanted_scope=merged)

    def wanted_scopes(self) -> tuple[str, ...]:
        """What the stored tokens were granted and what the server asked for since."""
        entry = self._entry()
        tokens = entry.get("tokens")
        granted = tokens.get("scope") if isinstance(tokens, dict) else None
        wanted = entry.get("wanted_scope")
        return tuple(s for s in (granted, wanted) if isinstance(s, str) and s)

    def save_secret_method(self, method: str | None) -> None:
        if self._entry().get("secret_method") != method:
            self._save(secret_method=method)

    def forget_client(self) -> None:
        self._save(client=None)

    def save_revocation(self, endpoint: str | None) -> None:
        self._save(revocation=endpoint)
