"""``/mcp login`` and ``/mcp logout`` in the real app, against an OAuth-protected server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from picode.session.config.settings import McpServer
from picode.tui.widgets.info import InfoView
from tests.session.mcp.conftest import free_port, settings_with, stop_http
from tests.session.mcp.test_mcp_oauth import start_oauth
from tests.tui.conftest import SIZE, TuiHarness, has_notice, opened, run, send, wait_until


@pytest.fixture
def oauth_url(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    process = start_oauth(port, tmp_path / "record.txt")
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_http(process)


class FakeBrowser:
    """Called on a worker thread as webbrowser would be: follows the login address; the
    authorization server's redirect reaches picode's loopback listener."""

    def __init__(self) -> None:
        self.opened: list[str] = []

    def __call__(self, url: str) -> bool:
        self.opened.append(url)
        with httpx2.Client(follow_redirects=True, timeout=20) as client:
            client.get(url)
        return True


def _mcp_text(app: object) -> str:
    views = [v for v in app.query(InfoView) if v.title_text == "MCP servers"]  # type: ignore[attr-defined]
    return views[-1].plain if views else ""


def test_a_server_needing_login_says_so_and_mcp_login_logs_in(
    tui: TuiHarness, oauth_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    browser = FakeBrowser()
    monkeypatch.setattr("picode.tui.controllers.mcp_commands.open_browser", browser)
    app = tui.app(tui.faux(), settings=settings_with(remote=McpServer(url=oauth_url)))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            session = app.session
            assert session is not None
            await wait_until(
                pilot,
                lambda: has_notice(
                    app, "MCP server 'remote' waiting for a login: run /mcp login remote"
                ),
                what="the needs-login notice",
                timeout=30,
            )
            await send(pilot, "/mcp")
            await wait_until(pilot, lambda: "not logged in" in _mcp_text(app))

            await send(pilot, "/mcp login remote")
            await wait_until(
                pilot, lambda: has_notice(app, "Logged in to 'remote'."), what="login", timeout=30
            )
            assert has_notice(app, "Log in to 'remote': a browser tab opened for it")
            await wait_until(
                pilot,
                lambda: [s.state for s in session.mcp_servers()] == ["ready"],
                what="the server ready",
                timeout=30,
            )
            await send(pilot, "/mcp")
            await wait_until(pilot, lambda: "ready (2 tools) · http · logged in" in _mcp_text(app))

            await send(pilot, "/mcp logout remote")
            await wait_until(pilot, lambda: has_notice(app, "Logged out of 'remote'."))
            await wait_until(
                pilot,
                lambda: [s.state for s in session.mcp_servers()] == ["needs_login"],
                what="needs login again",
                timeout=30,
            )
            await send(pilot, "/mcp login")
            await wait_until(pilot, lambda: has_notice(app, "/mcp login NAME"))

    run(scenario(), timeout=90)
    assert len(browser.opened) == 1
