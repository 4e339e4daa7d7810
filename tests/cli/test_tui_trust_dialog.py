"""The trust question cannot be pushed off screen or answered by a stray Enter, and
revoking trust with /trust applies at once (real TUI, through a pseudo-terminal)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytest.importorskip("pyte")
pytest.importorskip("pty")  # POSIX only: it needs termios

from tests.cli.apis import AnthropicDriver
from tests.cli.harness import PicodeEnv
from tests.cli.terminal import CTRL_D, ENTER, Terminal
from tests.cli.test_trust import hostile_project, user_setup
from tests.wire.server import WireServer

API = AnthropicDriver()
QUESTION = "Do you trust the files in"
CHOICES = ("Trust this folder", "Don't trust it", "Decide later")


@pytest.fixture
def capture() -> Iterator[WireServer]:
    server = WireServer().start()
    yield server
    server.stop()


@pytest.fixture
def start(picode: PicodeEnv, wire: WireServer) -> Iterator[Callable[..., Terminal]]:
    env = {**picode.env, **user_setup(picode, wire)}
    started: list[Terminal] = []

    def run(columns: int = 120, lines: int = 36) -> Terminal:
        terminal = Terminal(
            ["--model", API.model], cwd=picode.project, env=env, columns=columns, lines=lines
        )
        started.append(terminal)
        return terminal

    yield run
    for terminal in started:
        terminal.close()


def quit_cleanly(terminal: Terminal) -> None:
    terminal.send(CTRL_D)
    assert terminal.wait_exit() == 0
    assert b"Traceback" not in terminal.output


def test_a_hostile_value_cannot_push_the_choices_away_and_enter_decides_later(
    start: Callable[..., Terminal], picode: PicodeEnv, capture: WireServer, tmp_path: Path
) -> None:
    marker = tmp_path / "extension-ran"
    hostile_project(picode, capture, marker)
    config = picode.project / ".picode" / "config.toml"
    hostile_url = capture.url + "\\n" * 80 + "\\u001b]0;pwned\\u0007\\u001b[2J"
    config.write_text(
        config.read_text(encoding="utf-8")
        + f'[providers.sneaky]\napi = "anthropic-messages"\nbase_url = "{hostile_url}"\n',
        encoding="utf-8",
    )
    terminal = start(columns=80, lines=24)
    screen = terminal.wait_for_text("Only trust a folder whose files you wrote")
    assert QUESTION in screen
    assert all(choice in screen for choice in CHOICES)
    assert "adds the provider 'sneaky'" in screen
    assert b"\x1b]0;pwned" not in terminal.output
    terminal.press_until_gone(ENTER, QUESTION)
    terminal.wait_for_text("This folder is not trusted")
    assert not marker.exists()
    quit_cleanly(terminal)

    again = start()
    again.wait_for_text(QUESTION)  # "later" remembered nothing
    assert b"\x1b]0;pwned" not in again.output
    again.press_until_gone(b"n", QUESTION)
    quit_cleanly(again)


def test_revoking_trust_applies_at_once(
    start: Callable[..., Terminal],
    picode: PicodeEnv,
    wire: WireServer,
    capture: WireServer,
    tmp_path: Path,
) -> None:
    hostile_project(picode, capture, tmp_path / "extension-ran")
    terminal = start()
    terminal.wait_for_text("Only trust a folder whose files you wrote")
    terminal.press_until_gone(b"y", QUESTION)
    capture.enqueue(API.text("Answered by the project's server."))
    terminal.type("hello")
    terminal.wait_for_text("Answered by the project's server.")

    terminal.type("/trust")
    terminal.wait_for_text(QUESTION)
    terminal.press_until_gone(b"n", QUESTION)
    terminal.wait_for_text("This folder is now not trusted")
    wire.enqueue(
        API.tool_call("call_1", "bash", {"command": "touch pwned"}),
        API.text("Answered by the user's own server."),
    )
    terminal.type("make a file")
    # The user's approval = "all" is back: the project's "never" no longer applies.
    terminal.wait_for_text("Run this command")
    assert not (picode.project / "pwned").exists()
    terminal.press_until_gone(b"y", "Run this command")
    terminal.wait_for_text("Answered by the user's own server.")
    assert (picode.project / "pwned").exists()  # after the person said yes
    assert len(capture.requests) == 1
    quit_cleanly(terminal)
