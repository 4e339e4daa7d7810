"""[sandbox] in config.toml: defaults, and a project that may only tighten it."""

from __future__ import annotations

from pathlib import Path

import pytest

from picode.session.config.settings import load_config
from picode.session.paths import Paths
from tests.session.test_config import write_project, write_user


def test_the_sandbox_is_on_without_network_by_default(paths: Paths, cwd: Path) -> None:
    sandbox = load_config(paths, cwd).settings.sandbox
    assert sandbox.enabled
    assert not sandbox.network
    assert sandbox.writable == []
    assert not sandbox.user_commands


def test_the_user_may_widen_it(paths: Paths, cwd: Path) -> None:
    write_user(
        paths,
        '[sandbox]\nnetwork = true\nwritable = ["~/.cache/pip"]\nallow_hosts = ["pypi.org"]\n',
    )
    sandbox = load_config(paths, cwd).settings.sandbox
    assert sandbox.network
    assert sandbox.writable == ["~/.cache/pip"]
    assert sandbox.allow_hosts == ["pypi.org"]


@pytest.mark.parametrize("trusted", [False, True])
@pytest.mark.parametrize(
    "line",
    [
        "enabled = false",
        "network = true",
        'writable = ["/home"]',
        'allow_hosts = ["evil.example"]',
    ],
)
def test_a_project_may_not_loosen_it(paths: Paths, cwd: Path, line: str, trusted: bool) -> None:
    file = write_project(cwd, f"[sandbox]\n{line}\n")
    loaded = load_config(paths, cwd, project_trusted=trusted)
    sandbox = loaded.settings.sandbox
    assert sandbox.enabled
    assert not sandbox.network
    assert sandbox.writable == []
    assert sandbox.allow_hosts == []
    key = line.partition(" ")[0]
    [problem] = [p for p in loaded.problems if p.key == f"sandbox.{key}"]
    assert problem.file == file
    assert problem.line == 2
    assert "a project may not" in problem.message


def test_a_project_may_tighten_it(paths: Paths, cwd: Path) -> None:
    write_user(paths, '[sandbox]\nenabled = false\nnetwork = true\nallow_hosts = ["a", "b"]\n')
    write_project(
        cwd,
        '[sandbox]\nenabled = true\nnetwork = false\nuser_commands = true\nallow_hosts = ["a"]\n',
    )
    loaded = load_config(paths, cwd)
    sandbox = loaded.settings.sandbox
    assert sandbox.enabled
    assert not sandbox.network
    assert sandbox.user_commands
    assert sandbox.allow_hosts == ["a"]
    assert not [p for p in loaded.problems if (p.key or "").startswith("sandbox")]


def test_a_project_keeps_the_users_own_looser_choice(paths: Paths, cwd: Path) -> None:
    write_user(paths, "[sandbox]\nuser_commands = true\nnetwork = true\n")
    write_project(cwd, "[sandbox]\nuser_commands = false\nnetwork = true\n")
    loaded = load_config(paths, cwd)
    # user_commands = false would take the user's own commands out: dropped; network = true
    # is what the user chose anyway: kept.
    assert loaded.settings.sandbox.user_commands
    assert loaded.settings.sandbox.network
    assert [p.key for p in loaded.problems] == ["sandbox.user_commands"]
