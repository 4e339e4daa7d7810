"""An OAuth-protected streamable-HTTP MCP server for the tests, with the SDK's server auth.

``python oauth_server.py PORT ACCESS_SECONDS [CLIENT_ID SECRET REDIRECT_URI]``: the server
is its own authorization server
(discovery metadata, dynamic registration, authorize, token, revoke), in memory. Authorize
approves at once: it sends the browser straight back to the client's redirect URI with a
code. Access tokens live ``ACCESS_SECONDS``. Every grant, refresh, revocation and tool call is
written to $MCP_TEST_RECORD ("register", "authorize", "token code", "token refresh",
"revoke", "echo TEXT", "expire", "refused TOKEN-PREFIX"); the tool ``expire`` ends every
access token at once, as a server restart or a revocation elsewhere would.
"""

from __future__ import annotations

import os
import secrets
import sys
import time
from pathlib import Path

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken


def record(line: str) -> None:
    target = os.environ.get("MCP_TEST_RECORD")
    if target:
        with Path(target).open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")


class FakeAuthorizationServer:
    """A minimal in-memory OAuthAuthorizationServerProvider."""

    def __init__(self, access_seconds: int) -> None:
        self.access_seconds = access_seconds
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        record("register")
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        record("authorize")
        code = secrets.token_urlsafe(24)
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or ["mcp"],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        record("token code")
        self.codes.pop(authorization_code.code, None)
        return self._issue(authorization_code.client_id, authorization_code.scopes)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        if refresh_token.token not in self.refresh:
            raise TokenError(error="invalid_grant", error_description="refresh token revoked")
        record("token refresh")
        del self.refresh[refresh_token.token]
        return self._issue(refresh_token.client_id, scopes or refresh_token.scopes)

    async def load_access_token(self, token: str) -> AccessToken | None:
        access = self.access.get(token)
        if access is None or (access.expires_at is not None and access.expires_at < time.time()):
            record(f"refused {token[:6]}")
            return None
        return access

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        record("revoke")
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def _issue(self, client_id: str, scopes: list[str]) -> OAuthToken:
        access, refresh = f"at_{secrets.token_urlsafe(24)}", f"rt_{secrets.token_urlsafe(24)}"
        expires = int(time.time()) + self.access_seconds
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes)
        return OAuthToken(
            access_token=access,
            expires_in=self.access_seconds,
            refresh_token=refresh,
            scope=" ".join(scopes),
        )


def main() -> None:
    port, access_seconds = int(sys.argv[1]), int(sys.argv[2])
    base = f"http://127.0.0.1:{port}"
    provider = FakeAuthorizationServer(access_seconds)
    if len(sys.argv) > 4:
        # A client registered beforehand: CLIENT_ID CLIENT_SECRET REDIRECT_URI.
        client_id, secret, redirect = sys.argv[3], sys.argv[4], sys.argv[5]
        provider.clients[client_id] = OAuthClientInformationFull(
            client_id=client_id,
            client_secret=secret,
            redirect_uris=[redirect],  # type: ignore[list-item]
            token_endpoint_auth_method="client_secret_post",
            scope="mcp",
        )
    server = MCPServer(
        "picode-oauth-test",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base,  # type: ignore[arg-type]
            resource_server_url=f"{base}/mcp",  # type: ignore[arg-type]
            validate_token_resource=False,
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=["mcp"], default_scopes=["mcp"]
            ),
            revocation_options=RevocationOptions(enabled=True),
            required_scopes=["mcp"],
        ),
    )

    @server.tool(description="Repeat the text.")
    def echo(text: str) -> str:
        record(f"echo {text}")
        return f"echo: {text}"

    @server.tool(description="Every access token stops working (refresh tokens stay).")
    def expire() -> str:
        record("expire")
        provider.access.clear()
        return "expired"

    record(f"started {os.getpid()}")
    server.run("streamable-http", host="127.0.0.1", port=port)


if __name__ == "__main__":
    main()
