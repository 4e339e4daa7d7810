"""Plan mode through a real pseudo-terminal: Shift+Tab (``ESC [ Z``) reaches plan mode and
the footer says so, the plan prompt shows the model's plan and ``y`` approves it; Alt+T
(``ESC t``, what a terminal or tmux sends for it) cycles the thinking level."""

from __future__ import annotations

import pytest

pytest.importorskip("pyte")
pytest.importorskip("pty")  # POSIX only: it needs termios

from tests.cli.apis import AnthropicDriver
from tests.cli.terminal import CTRL_D, Start
from tests.wire.server import WireServer

API = AnthropicDriver()
SHIFT_TAB = b"\x1b[Z"
ALT_T = b"\x1bt"


def test_shift_tab_to_plan_mode_and_the_plan_approved(tui: Start, wire: WireServer) -> None:
    terminal = tui()
    # From the default ("never"): plan mode. Pressed again if it came before the session
    # opened (a key with no session to act on does nothing).
    for _ in range(20):
        terminal.send(SHIFT_TAB)
        if terminal.poll(lambda screen: "⏸ plan mode" in screen, 1.0) is not None:
            break
    terminal.wait_for_text("⏸ plan mode", timeout=0)
    wire.enqueue(API.tool_call("t1", "write", {"path": "out.txt", "content": "hi\n"}))
    wire.enqueue(API.tool_call("t2", "exit_plan_mode", {"plan": "## Steps\n\n1. write out.txt"}))
    wire.enqueue(API.tool_call("t3", "write", {"path": "out.txt", "content": "hi\n"}))
    wire.enqueue(API.text("Written."))
    terminal.type("write out.txt")
    # The question and its plan arrive over several writes: wait for the plan drawn whole.
    screen = terminal.wait_until(
        lambda text: "carry it out?" in text and "1. write out.txt" in text, "the plan"
    )
    boxed = [line for line in screen.splitlines() if line.startswith("│")]
    assert any("Steps" in line for line in boxed)
    assert not any("## Steps" in line for line in boxed)  # drawn as Markdown
    assert any("1. write out.txt" in line for line in boxed)
    assert "plan mode" in wire.requests[0].body.decode()  # the model was told
    terminal.press_until_gone(b"y", "carry it out?")
    terminal.wait_for_text("Written.")
    # The footer is drawn in the same frame or the next: wait for it, then read it.
    terminal.wait_for_gone("⏸ plan mode", timeout=5)
    terminal.send(CTRL_D)
    assert terminal.wait_exit() == 0


def test_alt_t_cycles_the_thinking_level(tui: Start) -> None:
    terminal = tui()
    for _ in range(20):
        terminal.send(ALT_T)
        if terminal.poll(lambda screen: "Thinking: " in screen, 1.0) is not None:
            break
    terminal.wait_for_text("Thinking: ", timeout=0)
    terminal.send(CTRL_D)
    assert terminal.wait_exit() == 0
