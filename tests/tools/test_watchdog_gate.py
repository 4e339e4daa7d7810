"""An unsandboxed command waits until the watchdog lists its group (picode killed in
between must not leave its jobs running) and never runs if picode is gone first."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from picode.agent.tool import ToolError
from picode.tools import bash
from picode.tools._watchdog import GATE_SHELL, Gate
from tests.tools.helpers import run

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")


def test_the_command_has_not_started_when_its_group_is_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[list[bytes], bool]] = []

    def watch(pgid: int) -> None:
        argv = Path(f"/proc/{pgid}/cmdline").read_bytes().split(b"\0")
        seen.append((argv, (tmp_path / "marker").exists()))

    monkeypatch.setattr(bash.WATCHDOG, "watch", watch)
    result = run(bash.BashTool(tmp_path), command="touch marker; echo ran")
    assert result.text_content == "ran"
    [(argv, marker_then)] = seen
    assert argv[0] == GATE_SHELL.encode()
    assert b"touch marker; echo ran" in argv
    assert not marker_then


def test_a_gate_closed_without_opening_runs_nothing(tmp_path: Path) -> None:
    gate = Gate()
    process = subprocess.Popen(
        gate.wrap(["/bin/sh", "-c", "touch marker"]), cwd=tmp_path, stdin=gate.stdin
    )
    gate.started()
    gate.close()
    assert process.wait(10) == 125
    assert not (tmp_path / "marker").exists()


def test_an_opened_gate_runs_the_command_with_empty_stdin(tmp_path: Path) -> None:
    gate = Gate()
    process = subprocess.Popen(
        gate.wrap(["/bin/sh", "-c", 'cat; echo "$0|$1"', "zero", "one"]),
        cwd=tmp_path,
        stdin=gate.stdin,
        stdout=subprocess.PIPE,
    )
    gate.started()
    gate.open()
    out, _ = process.communicate(timeout=10)
    assert out == b"zero|one\n"
    assert process.returncode == 0


def test_a_missing_shell_is_said_before_anything_starts(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="Cannot start /nowhere/zsh"):
        run(bash.BashTool(tmp_path, shell="/nowhere/zsh"), command="touch marker")
    assert not (tmp_path / "marker").exists()
