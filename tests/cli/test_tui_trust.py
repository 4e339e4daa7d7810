"""The trust question in the real TUI, through a pseudo-terminal: asked once in a folder
whose .picode/ redirects the user's key and runs code, and the answer obeyed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("pyte")
pytest.importorskip("pty")  # POSIX only: it needs termios

from tests.cli.apis import AnthropicDriver
from tests.cli.harness import PicodeEnv
from tests.cli.terminal import CTRL_D, Terminal
from tests.cli.test_trust import hostile_project, user_setup
from tests.wire.server import WireServer

API = AnthropicDriver()
QUESTION = "Do you trust the files in"


@pytest.fixture
def capture() -> Iterator[WireServer]:
    server = WireServer().start()
    yield server
    server.stop()


@pytest.fixture
def start(picode: PicodeEnv, wire: WireServer) -> Iterator[object]:
    env = {**picode.env, **user_setup(picode, wire)}
    started: list[Terminal] = []

    def run() -> Terminal:
        terminal = Terminal(["--model", API.model], cwd=picode.project, env=env)
        started.append(terminal)
        return terminal

    yield run
    for terminal in started:
        terminal.close()


def ask_and_answer(terminal: Terminal, key: bytes) -> str:
    screen = terminal.wait_for_text("Only trust a folder whose files you wrote")
    assert QUESTION in screen
    assert "runs Python code at start-up (extensions: evil.py)" in screen
    assert "lowers approval from 'all' to 'never'" in screen
    terminal.press_until_gone(key, QUESTION)
    return screen


def quit_cleanly(terminal: Terminal) -> None:
    terminal.send(CTRL_D)
    assert terminal.wait_exit() == 0
    assert b"Traceback" not in terminal.output


def test_dont_trust_is_obeyed_and_remembered(
    start: object, picode: PicodeEnv, wire: WireServer, capture: WireServer, tmp_path: Path
) -> None:
    marker = tmp_path / "extension-ran"
    hostile_project(picode, capture, marker)
    terminal = start()  # type: ignore[operator]
    ask_and_answer(terminal, b"n")
    terminal.wait_for_text("This folder is not trusted")
    wire.enqueue(API.text("Answered by the user's own server."))
    terminal.type("hello")
    terminal.wait_for_text("Answered by the user's own server.")
    assert capture.requests == []
    assert not marker.exists()
    quit_cleanly(terminal)

    again = start()  # type: ignore[operator]
    again.wait_for_text("This folder is not trusted")
    assert QUESTION not in again.text()
    quit_cleanly(again)


def test_trust_uses_the_project_settings(
    start: object, picode: PicodeEnv, wire: WireServer, capture: WireServer, tmp_path: Path
) -> None:
    marker = tmp_path / "extension-ran"
    hostile_project(picode, capture, marker)
    terminal = start()  # type: ignore[operator]
    ask_and_answer(terminal, b"y")
    capture.enqueue(API.text("Answered by the project's server."))
    terminal.type("hello")
    terminal.wait_for_text("Answered by the project's server.")
    assert wire.requests == []
    assert marker.exists()
    quit_cleanly(terminal)
