"""Leaving the TUI through a real pseudo-terminal: what is printed once the app is gone."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest

pytest.importorskip("pyte")
pytest.importorskip("pty")  # POSIX only: it needs termios

from tests.cli.apis import AnthropicDriver, use
from tests.cli.harness import PicodeEnv
from tests.cli.terminal import CTRL_D, Terminal, terminals
from tests.wire.server import WireServer

API = AnthropicDriver()
HINT = "Resume this session with: picode -c"

Start = Callable[..., Terminal]


@pytest.fixture
def tui(wire: WireServer, picode: PicodeEnv) -> Iterator[Start]:
    use(API, wire, picode)
    with terminals(picode, API.model) as start:

        def start_ready(*args: str) -> Terminal:
            terminal = start(*args)
            terminal.wait_for_text("↑0 ↓0")  # the session is open: the real editor has the keys
            return terminal

        yield start_ready


def _after_the_app(terminal: Terminal) -> str:
    """What the child wrote after leaving the alternate screen, escape codes dropped."""
    tail = bytes(terminal.output).rsplit(b"\x1b[?1049l", 1)[-1].decode("utf-8", "replace")
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", tail)


def test_quitting_a_saved_session_prints_how_to_resume_it(
    tui: Start, wire: WireServer, picode: PicodeEnv
) -> None:
    wire.enqueue(API.text("Saved."))
    terminal = tui()
    terminal.type("remember this")
    terminal.wait_for_text("Saved.")

    terminal.send(CTRL_D)

    assert terminal.wait_exit() == 0
    saved = list(picode.home.rglob("sessions/**/*.jsonl"))
    assert len(saved) == 1
    printed = _after_the_app(terminal)
    assert HINT in printed
    session_id = re.search(r"picode -r (\S+?)\)", printed)
    assert session_id is not None and session_id.group(1) in saved[0].name


def test_quitting_before_anything_was_saved_prints_no_hint(tui: Start) -> None:
    terminal = tui()

    terminal.send(CTRL_D)

    assert terminal.wait_exit() == 0
    assert "Resume this session" not in _after_the_app(terminal)


def test_a_session_named_by_a_new_path_is_saved_there_and_the_hint_names_it(
    tui: Start, wire: WireServer, picode: PicodeEnv
) -> None:
    wire.enqueue(API.text("Saved."))
    terminal = tui("--session", "named.jsonl")
    terminal.type("remember this")
    terminal.wait_for_text("Saved.")

    terminal.send(CTRL_D)

    assert terminal.wait_exit() == 0
    named = picode.project / "named.jsonl"
    assert "remember this" in named.read_text(encoding="utf-8")
    # -c and -r look in picode's sessions folder, where this one is not.
    assert f"Resume this session with: picode --session {named}" in _after_the_app(terminal)


def test_a_start_with_only_a_shell_command_leaves_no_session_behind(
    tui: Start, wire: WireServer, picode: PicodeEnv
) -> None:
    terminal = tui()
    terminal.type("!echo from-the-shell")
    terminal.wait_until(lambda screen: screen.count("from-the-shell") >= 2, "the output")

    terminal.send(CTRL_D)

    assert terminal.wait_exit() == 0
    assert HINT not in _after_the_app(terminal)
    assert list(picode.home.rglob("sessions/**/*.jsonl")) == []  # no clutter in the picker

    # With a prompt after it, the command's output is saved before the prompt, as sent.
    wire.enqueue(API.text("Seen."))
    again = tui()
    again.type("!echo kept-output")
    again.wait_until(lambda screen: screen.count("kept-output") >= 2, "the output")
    again.type("what did it print?")
    again.wait_for_text("Seen.")
    again.send(CTRL_D)
    assert again.wait_exit() == 0
    [saved] = list(picode.home.rglob("sessions/**/*.jsonl"))
    text = saved.read_text(encoding="utf-8")
    assert text.index("kept-output") < text.index("what did it print?")
