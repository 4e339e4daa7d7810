"""Clipboard: OSC 52 plus the platform tool, with fake tools on PATH."""

from __future__ import annotations

import shutil
import stat
import sys
from pathlib import Path

import pytest

from picode.tui.clipboard import candidate_tools, copy_to_clipboard, copy_with_tools
from tests.tui.conftest import run
from tests.tui.hosts import WidgetHost

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="fake tools are shell scripts")

TEXT = "héllo ✓ 世界\nsecond line"
CAT = shutil.which("cat") or "/bin/cat"


class FakeTerminalApp:
    """Records OSC 52 requests (Textual's ``App.copy_to_clipboard``)."""

    def __init__(self, *, broken: bool = False) -> None:
        self.copied: list[str] = []
        self.broken = broken

    def copy_to_clipboard(self, text: str) -> None:
        if self.broken:
            raise OSError("the terminal went away")
        self.copied.append(text)


def fake_tool(folder: Path, name: str, script: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + script, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def only(folder: Path) -> dict[str, str]:
    """An environment whose PATH holds nothing but ``folder``: real tools stay out."""
    return {"PATH": str(folder), "DISPLAY": ":0"}


def test_fake_xclip_receives_the_text_and_osc52_is_sent_too(tmp_path: Path) -> None:
    tools = tmp_path / "bin"
    out = tmp_path / "clipboard.txt"
    fake_tool(tools, "xclip", f'[ "$1 $2" = "-selection clipboard" ] || exit 3\n{CAT} > "{out}"\n')
    app = FakeTerminalApp()
    notice = copy_to_clipboard(app, TEXT, platform="linux", env=only(tools))
    assert notice == "Copied to the clipboard via xclip and OSC 52."
    assert out.read_text(encoding="utf-8") == TEXT
    assert app.copied == [TEXT]


def test_a_failing_tool_falls_through_to_the_next(tmp_path: Path) -> None:
    tools = tmp_path / "bin"
    out = tmp_path / "clipboard.txt"
    fake_tool(tools, "xclip", 'echo "Error: Can\'t open display: (null)" >&2\nexit 1\n')
    fake_tool(tools, "xsel", f'{CAT} > "{out}"\n')
    outcome = copy_with_tools(TEXT, platform="linux", env=only(tools))
    assert outcome.used == "xsel"
    assert outcome.failures == ["xclip: Error: Can't open display: (null)"]
    assert out.read_text(encoding="utf-8") == TEXT


def test_only_osc52_when_no_tool_is_installed(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    app = FakeTerminalApp()
    notice = copy_to_clipboard(app, TEXT, platform="linux", env=only(empty))
    assert notice.startswith("Copied via OSC 52 (terminal support varies")
    assert "no clipboard tool found (looked for xclip, xsel, wl-copy, clip.exe)" in notice
    assert app.copied == [TEXT]


def test_only_osc52_when_every_tool_fails(tmp_path: Path) -> None:
    tools = tmp_path / "bin"
    fake_tool(tools, "xclip", "exit 7\n")
    notice = copy_to_clipboard(FakeTerminalApp(), TEXT, platform="linux", env=only(tools))
    assert "Copied via OSC 52" in notice
    assert "the clipboard tool failed (xclip: exit status 7)" in notice


def test_nothing_worked_is_said_plainly(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    notice = copy_to_clipboard(
        FakeTerminalApp(broken=True), TEXT, platform="linux", env=only(empty)
    )
    assert notice.startswith("Could not copy: the terminal could not be reached and no clipboard")


def test_wayland_tool_goes_first_on_wayland() -> None:
    on_wayland = [name for name, _ in candidate_tools("linux", {"WAYLAND_DISPLAY": "wayland-0"})]
    on_x11 = [name for name, _ in candidate_tools("linux", {})]
    assert on_wayland[0] == "wl-copy" and on_x11[0] == "xclip"
    assert [name for name, _ in candidate_tools("darwin", {})] == ["pbcopy"]
    assert candidate_tools("darwin", {})[0][1] == ["pbcopy"]


def test_textual_app_receives_the_osc52_request(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    app = WidgetHost()

    async def scenario() -> None:
        async with app.run_test(size=(40, 5)):
            notice = copy_to_clipboard(app, TEXT, platform="linux", env=only(empty))
            assert "OSC 52" in notice
            assert app.clipboard == TEXT

    run(scenario())
