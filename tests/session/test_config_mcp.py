"""``[mcp.servers.NAME]`` in config.toml: validation and folder trust."""

from __future__ import annotations

from pathlib import Path

import pytest

from picode.session.config.settings import load_config
from picode.session.paths import Paths


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


SERVERS = """
[mcp.servers.files]
command = "python3"
args = ["-m", "files_server"]
env = { ROOT = "/srv" }
timeout_s = 5
tools = { deny = ["delete"], approved = ["read"] }

[mcp.servers.web]
url = "http://127.0.0.1:8931/mcp"
headers = { Authorization = "Bearer x" }

[mcp.servers.legacy]
url = "http://127.0.0.1:8932/sse"
transport = "sse"
enabled = false
"""


def test_servers_of_each_transport_are_read(paths: Paths, cwd: Path) -> None:
    write(paths.user_config_file, SERVERS)
    loaded = load_config(paths, cwd)
    servers = loaded.settings.mcp.servers
    assert loaded.problems == []
    assert {name: s.kind for name, s in servers.items()} == {
        "files": "stdio",
        "web": "http",
        "legacy": "sse",
    }
    files = servers["files"]
    assert (files.command, files.args, files.env, files.timeout_s) == (
        "python3",
        ["-m", "files_server"],
        {"ROOT": "/srv"},
        5.0,
    )
    assert files.tools.offers("read") and not files.tools.offers("delete")
    assert servers["web"].headers == {"Authorization": "Bearer x"}
    assert servers["legacy"].enabled is False


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('args = ["x"]', "needs command"),
        ('command = "a"\nurl = "http://127.0.0.1:1/mcp"', "not both"),
        ('url = "ftp://127.0.0.1/x"', "http:// or https://"),
        ('command = "a"\ntransport = "sse"', 'transport = "sse" needs url'),
    ],
)
def test_a_bad_server_is_reported_and_only_it_is_dropped(
    paths: Paths, cwd: Path, table: str, message: str
) -> None:
    file = write(
        paths.user_config_file, f'[mcp.servers.bad]\n{table}\n[mcp.servers.ok]\ncommand = "b"\n'
    )
    loaded = load_config(paths, cwd)
    assert list(loaded.settings.mcp.servers) == ["ok"]
    assert [p.file for p in loaded.problems] == [file]
    assert message in loaded.problems[0].message
    assert loaded.problems[0].key is not None and "mcp.servers.bad" in loaded.problems[0].key


def test_a_bad_timeout_falls_back_to_the_default(paths: Paths, cwd: Path) -> None:
    write(paths.user_config_file, '[mcp.servers.s]\ncommand = "a"\ntimeout_s = 0\n')
    loaded = load_config(paths, cwd)
    assert loaded.settings.mcp.servers["s"].timeout_s == 60.0
    assert loaded.problems[0].key == "mcp.servers.s.timeout_s"
    assert "greater than 0" in loaded.problems[0].message


def test_a_server_name_unfit_for_tool_names_is_reported(paths: Paths, cwd: Path) -> None:
    write(paths.user_config_file, '[mcp.servers."a__b"]\ncommand = "x"\n')
    loaded = load_config(paths, cwd)
    assert loaded.settings.mcp.servers == {}
    assert "without '__'" in loaded.problems[0].message


def test_untrusted_project_server_not_started(paths: Paths, cwd: Path) -> None:
    write(paths.user_config_file, '[mcp.servers.mine]\ncommand = "mine"\n')
    write(cwd / ".picode" / "config.toml", '[mcp.servers.repo]\ncommand = "./run-me"\n')
    untrusted = load_config(paths, cwd)
    assert list(untrusted.settings.mcp.servers) == ["mine"]
    assert [gate.loc for gate in untrusted.ignored] == [("mcp",)]
    trusted = load_config(paths, cwd, project_trusted=True)
    assert sorted(trusted.settings.mcp.servers) == ["mine", "repo"]
    assert trusted.settings.mcp.servers["repo"].command == "./run-me"


def test_the_oauth_table_is_read_and_checked(paths: Paths, cwd: Path) -> None:
    write(
        paths.user_config_file,
        '[mcp.servers.gh]\nurl = "https://example.com/mcp"\n'
        'oauth = { client_id = "abc", scopes = ["repo", "read"], redirect_port = 8765 }\n'
        '[mcp.servers.off]\nurl = "https://example.com/mcp"\noauth = false\n'
        '[mcp.servers.token]\nurl = "https://example.com/mcp"\n'
        'headers = { authorization = "Bearer x" }\n'
        '[mcp.servers.plain]\nurl = "https://example.com/mcp"\n'
        '[mcp.servers.local]\ncommand = "x"\n',
    )
    servers = load_config(paths, cwd).settings.mcp.servers
    login = servers["gh"].login
    assert login is not None and login.client_id == "abc" and login.redirect_port == 8765
    assert login.scopes == ["repo", "read"]
    assert servers["plain"].login is not None and servers["plain"].login.client_id is None
    # Not logged in to: told not to, given a token, or no HTTP at all.
    assert [servers[name].login for name in ("off", "token", "local")] == [None] * 3


@pytest.mark.parametrize(
    ("oauth", "message"),
    [
        ('{ client_secret = "s" }', "client_secret needs client_id"),
        ("{ redirect_port = 70000 }", "less than or equal to 65535"),
        ('{ client = "x" }', "unknown key"),
    ],
)
def test_a_bad_oauth_table_is_reported(paths: Paths, cwd: Path, oauth: str, message: str) -> None:
    write(
        paths.user_config_file,
        f'[mcp.servers.gh]\nurl = "https://example.com/mcp"\noauth = {oauth}\n',
    )
    loaded = load_config(paths, cwd)
    keys = [p.key or "" for p in loaded.problems if message in p.message]
    assert keys and keys[0].startswith("mcp.servers.gh.oauth")
