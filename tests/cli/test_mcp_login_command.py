"""``picode mcp login NAME`` / ``picode mcp logout NAME`` against an OAuth-protected server."""

from __future__ import annotations

import io
import json
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from picode.mcp_command import run_mcp_command
from picode.session.paths import Paths, resolve_paths
from tests.cli.apis import ChatDriver
from tests.cli.harness import PicodeEnv
from tests.session.mcp.conftest import free_port, recorded, stop_http
from tests.session.mcp.test_mcp_oauth import FakeBrowser, start_oauth
from tests.wire.server import WireServer


@pytest.fixture
def paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Paths:
    home = tmp_path / "home"
    monkeypatch.setenv("PICODE_HOME", str(home))
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return resolve_paths({"PICODE_HOME": str(home)})


@pytest.fixture
def oauth_url(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    record = tmp_path / "record.txt"
    port = free_port()
    process = start_oauth(port, record)
    try:
        yield f"http://127.0.0.1:{port}/mcp", record
    finally:
        stop_http(process)


def run(*argv: str, browser: FakeBrowser | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_mcp_command(list(argv), out, err, browser=browser)
    return code, out.getvalue(), err.getvalue()


def test_login_then_logout(paths: Paths, oauth_url: tuple[str, Path]) -> None:
    url, record = oauth_url
    assert run("add", "remote", "--url", url)[0] == 0
    assert run("list")[1] == f"remote  http  {url}  (not logged in)\n"
    browser = FakeBrowser()
    code, out, err = run("login", "remote", browser=browser)
    assert (code, err) == (0, "")
    assert browser.opened and browser.opened[0] in out
    assert out.endswith("Logged in to 'remote'.\n")
    stored = json.loads(paths.auth_file.read_text())["mcp:remote"]
    assert stored["url"] == url and stored["tokens"]["access_token"]
    assert stat.S_IMODE(paths.auth_file.stat().st_mode) == 0o600
    assert run("list")[1] == f"remote  http  {url}  (logged in)\n"

    assert run("logout", "remote") == (0, "Logged out of 'remote'.\n", "")
    assert "revoke" in recorded(record)
    assert "tokens" not in json.loads(paths.auth_file.read_text())["mcp:remote"]
    assert run("logout", "remote") == (0, "Not logged in to 'remote'.\n", "")


def test_login_refuses_what_it_cannot_log_in_to(paths: Paths) -> None:
    assert run("add", "local", "--", "python3", "-m", "srv")[0] == 0
    code, out, err = run("login", "local")
    assert code == 1 and "stdio" in err and out == ""
    code, _, err = run("login", "nobody")
    assert code == 1 and "no server named 'nobody'" in err
    assert run("login")[0] == 2


def test_a_failed_login_exits_1_and_stores_nothing(paths: Paths) -> None:
    # Nothing listens there: the login says so instead of waiting for a browser.
    assert run("add", "gone", "--url", f"http://127.0.0.1:{free_port()}/mcp")[0] == 0
    code, _, err = run("login", "gone", browser=FakeBrowser())
    assert code == 1 and err.startswith("picode mcp login: ")
    assert not paths.auth_file.exists() or "tokens" not in paths.auth_file.read_text()


def test_print_mode_names_a_server_waiting_for_a_login(
    wire: WireServer, picode: PicodeEnv, oauth_url: tuple[str, Path]
) -> None:
    api = ChatDriver()
    picode.add_config(api.config(wire))
    picode.add_config(f'[mcp.servers.remote]\nurl = "{oauth_url[0]}"\n')
    wire.enqueue(api.text("Fine."))

    result = picode.run("-p", "hello", "--model", api.model)

    assert result.returncode == 0, result.stderr
    assert (
        "MCP server 'remote' is waiting for a login: run /mcp login remote "
        "(or picode mcp login remote)" in result.stderr
    )
