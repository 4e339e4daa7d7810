"""Undo through a real pseudo-terminal and the installed command: the model changes files
with bash, Esc Esc on the empty editor opens /rewind, and the files come back."""

from __future__ import annotations

import shutil

import pytest

pytest.importorskip("pyte")
pytest.importorskip("pty")  # POSIX only: it needs termios

from tests.cli.apis import AnthropicDriver
from tests.cli.harness import PicodeEnv
from tests.cli.terminal import ESCAPE, Start
from tests.wire.server import WireServer

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need git")

API = AnthropicDriver()
PICKER = "Rewind to before one of your messages"


def test_esc_esc_rewinds_what_a_bash_call_changed(
    tui: Start, wire: WireServer, picode: PicodeEnv
) -> None:
    notes = picode.project / "notes.txt"
    notes.write_text("old notes\n", encoding="utf-8")
    wire.enqueue(
        API.tool_call("call_1", "bash", {"command": "echo new > notes.txt && echo x > made.txt"}),
        API.text("Both files changed."),
    )
    terminal = tui()
    terminal.type("change the notes")
    terminal.wait_for_text("Both files changed.")
    assert notes.read_text(encoding="utf-8") == "new\n"

    for _ in range(3):  # the second Esc must come within a second of the first
        terminal.send(ESCAPE)
        terminal.wait_for_text("Press esc again to rewind")
        terminal.send(ESCAPE)
        if terminal.poll(lambda screen: PICKER in screen, 5) is not None:
            break
    terminal.wait_for_text(PICKER)
    terminal.send(b"\r")
    terminal.wait_for_text("D made.txt")  # what restoring would do, before it is done
    terminal.send(b"\r")  # "Restore code and conversation"
    terminal.wait_for_text("Wrote back 1 file(s) and removed 1.")
    assert notes.read_text(encoding="utf-8") == "old notes\n"
    assert not (picode.project / "made.txt").exists()
