"""OAuth against a real OAuth-protected MCP server (tests/session/mcp/oauth_server.py, the
SDK's own server auth): needs-login, login in a fake browser, calls, refreshing, logout."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from picode.session.config.mcp import McpOAuth, McpServer
from picode.session.mcp import McpLoginError
from picode.session.mcp.connection import McpConnection
from picode.session.mcp.oauth import login, logout
from picode.session.models.auth import AuthStore
from tests.session.mcp.conftest import _wait_listening, free_port, recorded, stop_http

OAUTH_SERVER = Path(__file__).with_name("oauth_server.py")


def start_oauth(
    port: int, record: Path, access_seconds: int = 3600, *client: str
) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, str(OAUTH_SERVER), str(port), str(access_seconds), *client],
        env={**os.environ, "MCP_TEST_RECORD": str(record)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_listening(port, process)
    except BaseException:
        stop_http(process)
        raise
    return process


@pytest.fixture
def oauth_url(record: Path) -> Iterator[str]:
    port = free_port()
    process = start_oauth(port, record)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_http(process)


class FakeBrowser:
    """Follows the authorization URL as a browser would: the server's redirect lands on
    picode's loopback listener."""

    def __init__(self) -> None:
        self.opened: list[str] = []
        self.pages: list[tuple[int, str]] = []
        self._tasks: set[asyncio.Task[None]] = set()

    def __call__(self, url: str) -> None:
        self.opened.append(url)
        task = asyncio.get_running_loop().create_task(self._visit(url))
        self._tasks.add(task)

    async def _visit(self, url: str) -> None:
        async with httpx2.AsyncClient(follow_redirects=True, timeout=20) as client:
            response = await client.get(url)
            self.pages.append((response.status_code, response.text))


def server(url: str, **config: Any) -> McpServer:
    return McpServer(url=url, **{"timeout_s": 20, **config})


async def connect(name: str, config: McpServer, auth: AuthStore, cwd: Path) -> McpConnection:
    connection = McpConnection(name, config, cwd, lambda: None, auth)
    connection.start()
    await asyncio.wait_for(connection.wait_settled(), 30)
    return connection


def test_a_server_that_wants_oauth_needs_a_login_and_says_how(
    oauth_url: str, tmp_path: Path
) -> None:
    auth = AuthStore(tmp_path / "auth.json")

    async def scenario() -> McpConnection:
        connection = await connect("remote", server(oauth_url, timeout_s=60), auth, tmp_path)
        await connection.stop()
        return connection

    connection = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert connection.state == "needs_login"
    assert connection.error is not None and "/mcp login remote" in connection.error
    status = connection.status(())
    assert status.login == "not logged in"
    # Nothing is stored for a login nobody asked for.
    assert not (tmp_path / "auth.json").exists()


def test_login_call_refresh_and_logout(oauth_url: str, tmp_path: Path, record: Path) -> None:
    auth = AuthStore(tmp_path / "auth.json")
    browser = FakeBrowser()
    config = server(oauth_url, oauth=McpOAuth(scopes=["mcp"]))

    async def scenario() -> tuple[str, str, str]:
        await login("remote", config, auth, browser)
        connection = await connect("remote", config, auth, tmp_path)
        assert connection.state == "ready", connection.error
        first = await connection.call("echo", {"text": "one"})
        # The stored token's expiry has passed: picode refreshes before sending.
        entry = auth.entry("mcp:remote")
        auth.put("mcp:remote", {**entry, "expires_at": 1})
        await connection.restart()
        await asyncio.wait_for(connection.wait_settled(), 30)
        second = await connection.call("echo", {"text": "two"})
        # The server ends every access token early: picode refreshes on the 401.
        await connection.call("expire", {})
        third = await connection.call("echo", {"text": "three"})
        message = await connection.logout()
        await asyncio.wait_for(connection.wait_settled(), 30)
        state = connection.state
        await connection.stop()
        return _text(first) + _text(second) + _text(third), message, state

    texts, message, state = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert texts == "echo: oneecho: twoecho: three"
    assert len(browser.opened) == 1 and "code_challenge=" in browser.opened[0]
    assert browser.pages[0][0] == 200
    lines = recorded(record)
    assert lines.count("register") == 1 and lines.count("token code") == 1
    assert lines.count("token refresh") == 2
    assert "revoke" in lines
    assert message == "Logged out of 'remote'."
    assert state == "needs_login"
    stored = json.loads((tmp_path / "auth.json").read_text())["mcp:remote"]
    assert "tokens" not in stored and stored["client"]["client_id"]
    assert stat.S_IMODE((tmp_path / "auth.json").stat().st_mode) == 0o600


def test_a_second_login_reuses_the_registration(
    oauth_url: str, tmp_path: Path, record: Path
) -> None:
    auth = AuthStore(tmp_path / "auth.json")
    config = server(oauth_url)

    async def scenario() -> None:
        await login("remote", config, auth, FakeBrowser())
        await login("remote", config, auth, FakeBrowser())

    asyncio.run(asyncio.wait_for(scenario(), 60))
    lines = recorded(record)
    assert lines.count("register") == 1 and lines.count("token code") == 2


def test_tokens_are_remembered_as_secrets(oauth_url: str, tmp_path: Path) -> None:
    from picode.ai.redaction import redact

    auth = AuthStore(tmp_path / "auth.json")

    async def scenario() -> None:
        await login("remote", server(oauth_url), auth, FakeBrowser())

    asyncio.run(asyncio.wait_for(scenario(), 60))
    tokens = auth.entry("mcp:remote")["tokens"]
    for key in ("access_token", "refresh_token"):
        assert tokens[key] not in redact(f"token: {tokens[key]}")


def test_a_refused_login_says_why(oauth_url: str, tmp_path: Path) -> None:
    auth = AuthStore(tmp_path / "auth.json")

    async def refusing_browser(url: str) -> None:
        # The person said no: the authorization server sends the browser back with an error.
        redirect = parse_qs(urlsplit(url).query)["redirect_uri"][0]
        async with httpx2.AsyncClient() as client:
            await client.get(f"{redirect}?error=access_denied&state=x")

    async def scenario() -> None:
        await login("remote", server(oauth_url), auth, refusing_browser)

    with pytest.raises(McpLoginError, match="access_denied"):
        asyncio.run(asyncio.wait_for(scenario(), 60))
    assert "tokens" not in auth.entry("mcp:remote")


def test_logout_without_a_login(tmp_path: Path) -> None:
    auth = AuthStore(tmp_path / "auth.json")
    config = server("http://127.0.0.1:9/mcp")
    assert asyncio.run(logout("remote", config, auth)) == (False, None)


def _text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def test_a_configured_client_logs_in_without_registering(tmp_path: Path, record: Path) -> None:
    port, redirect_port = free_port(), free_port()
    redirect = f"http://127.0.0.1:{redirect_port}/callback"
    process = start_oauth(port, record, 3600, "picode-test", "s3cret-value", redirect)
    auth = AuthStore(tmp_path / "auth.json")
    login_config = McpOAuth(
        client_id="picode-test",
        client_secret="s3cret-value",
        secret_method="client_secret_post",
        redirect_port=redirect_port,
    )
    config = server(f"http://127.0.0.1:{port}/mcp", oauth=login_config)

    async def scenario() -> tuple[str, tuple[bool, str | None]]:
        await login("remote", config, auth, FakeBrowser())
        connection = await connect("remote", config, auth, tmp_path)
        result = await connection.call("echo", {"text": "pre"})
        await connection.stop()
        return _text(result), await logout("remote", config, auth)

    try:
        text, (had, problem) = asyncio.run(asyncio.wait_for(scenario(), 60))
    finally:
        stop_http(process)
    assert text == "echo: pre"
    assert (had, problem) == (True, None)
    lines = recorded(record)
    assert "register" not in lines and "token code" in lines and "revoke" in lines
    stored = auth.entry("mcp:remote")
    # The secret is the config's: not copied into the auth file.
    assert "client" not in stored and stored["secret_method"] == "client_secret_post"


def test_a_login_asks_for_every_scope_wanted_so_far(tmp_path: Path) -> None:
    from picode.session.mcp.oauth import _metadata, _Provider
    from picode.session.mcp.tokens import McpTokenStore

    url = "http://127.0.0.1:9/mcp"
    config = server(url, oauth=McpOAuth(scopes=["read"]))
    store = McpTokenStore(AuthStore(tmp_path / "auth.json"), "remote", config)
    # A session met "403 insufficient_scope" asking for more: the next login asks for it.
    store.want_scope("admin write")
    assert store.wanted_scopes() == ("admin write",)
    provider = _Provider(
        store,
        lambda exc: None,
        interactive=True,
        server_url=url,
        client_metadata=_metadata(store),
    )
    request = httpx2.Request("POST", url)
    # A server that let the request through is still asked to authorize.
    challenge = provider._challenge(request, httpx2.Response(200, request=request))
    assert challenge.status_code == 401
    assert challenge.headers["WWW-Authenticate"] == 'Bearer scope="admin write read"'
    metadata = "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp"
    refused = httpx2.Response(
        403,
        headers={
            "WWW-Authenticate": f'Bearer error="insufficient_scope", scope="files", '
            f'resource_metadata="{metadata}"'
        },
        request=request,
    )
    assert provider._challenge(request, refused).headers["WWW-Authenticate"] == (
        f'Bearer resource_metadata="{metadata}", scope="files admin write read"'
    )
