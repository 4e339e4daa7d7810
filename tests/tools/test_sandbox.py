"""The sandbox around bash (bubblewrap on Linux): what it blocks, what it lets through,
how it reports a block and how a command leaves it when the user agrees."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

import pytest

from picode.ai.abort import AbortController
from picode.tools.bash import BashTool
from picode.tools.sandbox import EscalationChoice, Sandbox, SandboxConfig, probe_mechanism
from picode.tools.sandbox.runtime import Mechanism
from tests.tools.helpers import call, run, sleeps_of

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="bubblewrap is the Linux sandbox"
)
WAIT = 10.0


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".picode").mkdir(parents=True)
    (folder / ".git" / "hooks").mkdir(parents=True)
    (folder / ".git" / "config").write_text("[core]\n")
    return folder


def sandboxed(project: Path, home: Path, **config: object) -> BashTool:
    found = probe_mechanism().mechanism
    assert found is not None, f"no sandbox on this machine: {probe_mechanism().problem}"
    settings = SandboxConfig(home=home, **config)  # type: ignore[arg-type]
    return BashTool(project, sandbox=Sandbox(settings))


def assert_blocked(tool: BashTool, command: str, what: str) -> str:
    result = run(tool, command=command)
    assert result.is_error
    assert result.details["sandbox_blocked"] == what
    assert f"[The sandbox blocked {what}. To allow it," in result.text_content
    return result.text_content


def test_a_write_to_home_is_blocked_and_reported(project: Path, home: Path) -> None:
    assert_blocked(sandboxed(project, home), "echo x > ~/x", "a write outside the writable folders")
    assert not (home / "x").exists()


def test_a_write_to_shell_startup_files_is_blocked(project: Path, home: Path) -> None:
    (home / ".bashrc").write_text("# mine\n")
    tool = sandboxed(project, home)
    assert_blocked(tool, "echo evil >> ~/.bashrc", "a write outside the writable folders")
    assert (home / ".bashrc").read_text() == "# mine\n"


def test_a_write_to_picodes_config_folder_is_blocked(project: Path, home: Path) -> None:
    # Inside the temp folder, which is writable: only the read-only bind protects it.
    config = project.parent / "picode-home" / "config"
    config.mkdir(parents=True)
    tool = sandboxed(project, home, protected=(config,))
    command = f"echo 'approval = \"never\"' > {config}/config.toml"
    assert_blocked(tool, command, "a write outside the writable folders")
    assert not (config / "config.toml").exists()


@pytest.mark.parametrize("target", [".picode/config.toml", ".git/hooks/pre-commit", ".git/config"])
def test_the_projects_own_protected_paths_stay_read_only(
    project: Path, home: Path, target: str
) -> None:
    before = (project / target).read_bytes() if (project / target).exists() else None
    assert_blocked(
        sandboxed(project, home), f"echo x >> {target}", "a write outside the writable folders"
    )
    after = (project / target).read_bytes() if (project / target).exists() else None
    assert after == before


def test_writes_in_the_project_and_the_temp_folder_work(project: Path, home: Path) -> None:
    outside = Path(tempfile.gettempdir()) / f"picode-sandbox-{os.getpid()}"
    tool = sandboxed(project, home)
    try:
        result = run(tool, command=f"echo in > made.txt && echo tmp > {outside} && cat made.txt")
        assert not result.is_error, result.text_content
        assert (project / "made.txt").read_text() == "in\n"
        assert outside.read_text() == "tmp\n"
    finally:
        outside.unlink(missing_ok=True)


def test_a_configured_writable_folder_is_writable(project: Path, home: Path) -> None:
    extra = home / "cache"
    extra.mkdir()
    result = run(sandboxed(project, home, writable=(extra,)), command="echo y > ~/cache/f")
    assert not result.is_error, result.text_content
    assert (extra / "f").read_text() == "y\n"


def test_secrets_folders_are_hidden(project: Path, home: Path) -> None:
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY")
    auth = project.parent / "auth.json"
    auth.write_text('{"anthropic": "sk-secret"}')
    tool = sandboxed(project, home, secret_files=(auth,))
    result = run(tool, command=f"cat ~/.ssh/id_rsa; cat {auth}; ls -A ~/.ssh")
    assert "PRIVATE KEY" not in result.text_content
    assert "sk-secret" not in result.text_content


def test_a_connection_to_a_loopback_port_is_blocked(project: Path, home: Path) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.settimeout(0.2)
        port = server.getsockname()[1]
        command = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
        text = assert_blocked(sandboxed(project, home), command, "network access")
        assert "connected" not in text
        with pytest.raises(TimeoutError):
            server.accept()


def test_the_network_can_be_allowed_by_config(project: Path, home: Path) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        tool = sandboxed(project, home, network=True)
        result = run(tool, command=f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")
        assert result.text_content == "connected"


def test_an_unrelated_failure_is_not_called_a_block(project: Path, home: Path) -> None:
    result = run(sandboxed(project, home), command="echo nothing here; exit 3")
    assert result.is_error
    assert "sandbox_blocked" not in result.details
    assert "sandbox" not in result.text_content


def escalating(tool: BashTool, choice: EscalationChoice) -> list[tuple[str, str]]:
    asked: list[tuple[str, str]] = []

    async def escalate(command: str, blocked: str) -> EscalationChoice:
        asked.append((command, blocked))
        return choice

    assert tool.sandbox is not None
    tool.sandbox.escalate = escalate
    return asked


def test_yes_runs_the_blocked_command_outside_the_sandbox(project: Path, home: Path) -> None:
    tool = sandboxed(project, home)
    asked = escalating(tool, "once")
    result = run(tool, command="echo x > ~/x && echo done")
    assert asked == [("echo x > ~/x && echo done", "a write outside the writable folders")]
    assert (home / "x").read_text() == "x\n"
    assert not result.is_error
    assert result.text_content.endswith("done")
    assert "The user let it run outside the sandbox" in result.text_content
    # Once only: the next command is sandboxed again, and asked about again.
    run(tool, command="echo y > ~/y")
    assert len(asked) == 2


def test_no_keeps_the_command_blocked(project: Path, home: Path) -> None:
    tool = sandboxed(project, home)
    escalating(tool, "no")
    result = run(tool, command="echo x > ~/x")
    assert result.is_error
    assert "The user chose not to run it outside the sandbox" in result.text_content
    assert not (home / "x").exists()


def test_allowing_the_network_for_the_session_lasts(project: Path, home: Path) -> None:
    tool = sandboxed(project, home)
    asked = escalating(tool, "network")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        command = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
        assert run(tool, command=command).text_content.endswith("connected")
        again = run(tool, command=command)
    assert again.text_content == "connected"
    assert len(asked) == 1
    # Still in the sandbox for files.
    assert run(tool, command="echo x > ~/x").details["sandbox_blocked"]
    assert len(asked) == 2


def test_esc_kills_a_sandboxed_command_and_everything_it_started(project: Path, home: Path) -> None:
    marker = f"{4000 + os.getpid() % 1000}.25"

    async def scenario() -> float:
        controller = AbortController()
        task = asyncio.create_task(
            call(
                sandboxed(project, home),
                controller.signal,
                command=f"sleep {marker} & sleep {marker}; wait",
            )
        )
        await wait_for(lambda: len(sleeps_of(marker)) == 2)
        started = time.monotonic()
        controller.abort("user")
        await wait_for(lambda: not sleeps_of(marker))
        gone = time.monotonic() - started
        result = await asyncio.wait_for(task, WAIT)
        assert result.details["aborted"]
        return gone

    assert asyncio.run(scenario()) < 1.0


def test_user_commands_run_outside_unless_configured(project: Path, home: Path) -> None:
    tool = sandboxed(project, home)
    assert tool.for_user().sandbox is None
    assert not run(tool.for_user(), command="echo x > ~/x").is_error
    inside = sandboxed(project, home, user_commands=True)
    assert inside.for_user() is inside


def test_without_a_mechanism_bash_runs_unconfined(project: Path, home: Path) -> None:
    sandbox = Sandbox(SandboxConfig(home=home, enabled=False))
    assert not sandbox.active
    assert sandbox.wrap(["sh", "-c", "true"], project) == ["sh", "-c", "true"]
    assert not run(BashTool(project, sandbox=sandbox), command="echo x > ~/x").is_error


def test_the_bwrap_command_line(project: Path, home: Path) -> None:
    (home / ".ssh").mkdir()
    sandbox = Sandbox(SandboxConfig(home=home), Mechanism("bwrap", "/x/bwrap"))
    argv = sandbox.wrap(["bash", "-c", "true"], project)
    joined = " ".join(argv)
    assert argv[:5] == ["/x/bwrap", "--ro-bind", "/", "/", "--dev"]
    assert f"--bind {project.resolve()} {project.resolve()}" in joined
    assert f"--ro-bind {(project / '.picode').resolve()}" in joined
    assert f"--tmpfs {(home / '.ssh').resolve()}" in joined
    for flag in ("--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session"):
        assert flag in argv
    assert argv[-4:] == ["--", "bash", "-c", "true"]
    sandbox.network_for_session = True
    assert "--unshare-net" not in sandbox.wrap(["true"], project)


async def wait_for(condition: object, timeout: float = WAIT) -> None:
    assert callable(condition)
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.005)
