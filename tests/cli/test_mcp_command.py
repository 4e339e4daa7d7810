"""``picode mcp list`` / ``picode mcp add``: routing, config edits that keep comments, errors."""

from __future__ import annotations

import io
import tomllib
from pathlib import Path

import pytest

from picode.cli import main
from picode.mcp_command import run_mcp_command
from picode.session.config.settings import load_config
from picode.session.paths import Paths, resolve_paths


@pytest.fixture
def paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Paths:
    home = tmp_path / "home"
    monkeypatch.setenv("PICODE_HOME", str(home))
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return resolve_paths({"PICODE_HOME": str(home)})


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_mcp_command(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_add_keeps_comments_and_the_result_loads(paths: Paths) -> None:
    paths.user_config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.user_config_file.write_text('# my settings\ntheme = "light"  # eyes\n', encoding="utf-8")
    code, out, err = run("add", "files", "--env", "ROOT=/a=b", "--", "python3", "-m", "srv", "-v")
    assert (code, err) == (0, "")
    assert "[mcp.servers.files]" in out
    text = paths.user_config_file.read_text(encoding="utf-8")
    assert text.startswith('# my settings\ntheme = "light"  # eyes\n')
    loaded = load_config(paths, Path.cwd())
    assert loaded.problems == []
    server = loaded.settings.mcp.servers["files"]
    assert (server.command, server.args, server.env) == (
        "python3",
        ["-m", "srv", "-v"],
        {"ROOT": "/a=b"},
    )


def test_add_an_http_server_with_headers(paths: Paths) -> None:
    code, _, err = run("add", "web", "--url", "http://127.0.0.1:9/mcp", "--header", "X-Key: abc")
    assert (code, err) == (0, "")
    data = tomllib.loads(paths.user_config_file.read_text(encoding="utf-8"))
    assert data["mcp"]["servers"]["web"] == {
        "url": "http://127.0.0.1:9/mcp",
        "headers": {"X-Key": "abc"},
    }


def test_add_refuses_to_replace_a_server(paths: Paths) -> None:
    assert run("add", "s", "--", "one")[0] == 0
    before = paths.user_config_file.read_text(encoding="utf-8")
    code, _, err = run("add", "s", "--", "two")
    assert code == 1 and "already has [mcp.servers.s]" in err
    assert paths.user_config_file.read_text(encoding="utf-8") == before


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("add", "s"), "give either"),
        (("add", "s", "--url", "http://127.0.0.1:1/m", "--", "cmd"), "give either"),
        (("add", "a__b", "--", "cmd"), "without '__'"),
        (("add", "s", "--env", "NOVALUE", "--", "cmd"), "KEY=VALUE"),
        (("remove", "s"), "usage: picode mcp list"),
    ],
)
def test_bad_usage_writes_nothing(paths: Paths, argv: tuple[str, ...], message: str) -> None:
    code, _, err = run(*argv)
    assert code == 2 and message in err
    assert not paths.user_config_file.exists()


def test_a_broken_config_is_not_overwritten(paths: Paths) -> None:
    paths.user_config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.user_config_file.write_text("theme = \n", encoding="utf-8")
    code, _, err = run("add", "s", "--", "cmd")
    assert code == 1 and "nothing changed" in err
    assert paths.user_config_file.read_text(encoding="utf-8") == "theme = \n"


def test_list_shows_servers_and_hides_an_untrusted_projects(
    paths: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("add", "mine", "--", "python3", "srv.py")[0] == 0
    project = Path.cwd() / ".picode" / "config.toml"
    project.parent.mkdir()
    project.write_text('[mcp.servers.repo]\ncommand = "./evil"\n', encoding="utf-8")
    # Routed through the real entry point: "mcp" as the first word is the command.
    assert main(["mcp", "list"]) == 0
    shown = capsys.readouterr().out
    assert "mine  stdio  python3 srv.py" in shown
    assert "repo" not in shown and "not trusted" in shown
