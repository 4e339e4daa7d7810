"""Through a real pseudo-terminal: the row that says new output arrived below the view,
ctrl+end back to the end, ctrl+f search, and a picker's key hints on a 15-row terminal."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("pyte")
pytest.importorskip("pty")  # POSIX only: it needs termios

from tests.cli.apis import AnthropicDriver, use
from tests.cli.harness import PicodeEnv
from tests.cli.terminal import ENTER, ESCAPE, Start, Terminal
from tests.wire.anthropic_protocol import AnthropicStream
from tests.wire.server import Pause, WireServer

API = AnthropicDriver()
PAGE_UP = b"\x1b[5~"
CTRL_END = b"\x1b[1;5F"  # xterm's ctrl+end
CTRL_F = b"\x06"
#: Long enough for the test to scroll up while the server waits (the test never sleeps).
PAUSE_S = 3.0
BELOW = "New output below"


def _rows(screen: str) -> list[int]:
    return [int(number) for number in re.findall(r"row (\d{3})", screen)]


def test_new_output_below_is_announced_and_ctrl_end_jumps_to_it(
    tui: Start, wire: WireServer
) -> None:
    rows = "\n".join(f"row {number:03d}" for number in range(1, 121))
    stream = AnthropicStream()
    index = stream.block_start({"type": "text", "text": ""})
    stream.delta(index, {"type": "text_delta", "text": f"```\n{rows}\n```\n\n"})
    stream.chunk(Pause(PAUSE_S))
    stream.delta(index, {"type": "text_delta", "text": "The late part."})
    stream.block_stop(index)
    wire.enqueue(stream.stop().response())
    terminal = tui()
    terminal.wait_for_text("↑0 ↓0")
    terminal.type("long please")
    terminal.wait_until(lambda screen: 120 in _rows(screen), "the rows")

    terminal.send(PAGE_UP * 2)

    screen = terminal.wait_for_text(BELOW)
    assert "The late part." not in screen and "ctrl+end" in screen
    terminal.send(CTRL_END)
    screen = terminal.wait_for_text("The late part.")
    terminal.wait_for_gone(BELOW)


def test_ctrl_f_finds_text_above_the_view_and_esc_closes_the_search(
    tui: Start, wire: WireServer
) -> None:
    rows = "\n".join(
        f"row {number:03d}{' needle' if number == 7 else ''}" for number in range(1, 121)
    )
    wire.enqueue(API.text(f"```\n{rows}\n```\n\nThe end."))
    terminal = tui()
    terminal.wait_for_text("↑0 ↓0")
    terminal.type("long please")
    terminal.wait_for_text("The end.")
    assert "row 007" not in terminal.text()

    terminal.send(CTRL_F)
    terminal.wait_for_text("esc close")
    terminal.send(b"needle")

    # The view moves to the match and the count is drawn, in whichever frame each lands.
    terminal.wait_until(
        lambda screen: "row 007 needle" in screen and "1 of 1" in screen, "the match"
    )
    terminal.send(ESCAPE)
    terminal.wait_for_gone("esc close")
    assert terminal.alive
    terminal.send(CTRL_END)
    terminal.wait_for_text("The end.")


def test_a_picker_keeps_its_key_hints_on_a_15_row_terminal(
    wire: WireServer, picode: PicodeEnv
) -> None:
    use(API, wire, picode)
    terminal = Terminal(["--model", API.model], cwd=picode.project, env=picode.env, lines=15)
    try:
        terminal.wait_for_text("↑0 ↓0")
        terminal.type("/model")
        terminal.send(ENTER)
        screen = terminal.wait_for_text("esc cancel")
        lines = [line for line in screen.splitlines() if line.strip()]
        # The hints on the box's last row, inside its border, on the screen.
        assert "Select a model" in screen and len(lines) <= 15
        assert "esc cancel" in lines[-2] and "╰" in lines[-1]
        terminal.send(ESCAPE)
        terminal.wait_for_gone("esc cancel")
    finally:
        terminal.close()
