"""What is typed is never lost and never sent by accident, and what is drawn honours the
terminal's wishes: the installed picode in a pty, keys sent as a person sends them."""

from __future__ import annotations

import pytest

pytest.importorskip("pyte")
pytest.importorskip("pty")  # POSIX only: it needs termios

from tests.cli.terminal import CTRL_C, CTRL_D, Start
from tests.wire.server import WireServer


def test_ctrl_c_with_new_text_in_the_editor_clears_it_and_never_quits(tui: Start) -> None:
    terminal = tui()
    terminal.send(b"first draft")
    terminal.wait_for_text("first draft")
    terminal.send(CTRL_C)
    terminal.wait_for_text("ctrl+c again to quit")
    terminal.send(b"hello")
    terminal.wait_for_text("hello")
    terminal.send(CTRL_C)  # within the double press: the editor holds new text
    terminal.wait_for_gone("hello")
    assert terminal.alive
    terminal.send(CTRL_D)
    assert terminal.wait_exit() == 0


def test_a_refused_command_is_not_joined_to_the_next_one(tui: Start, wire: WireServer) -> None:
    terminal = tui()
    terminal.type("/fork")
    terminal.wait_for_text("Nothing to fork from")
    terminal.type("/compact")
    terminal.wait_for_text("Nothing to compact")
    terminal.type("/fork/compact")
    terminal.wait_for_text("not sent")
    assert wire.requests == []  # none of them reached the model
    assert terminal.alive
    terminal.send(CTRL_D)
    assert terminal.wait_exit() == 0


def test_keys_in_one_read_apply_in_order(tui: Start) -> None:
    terminal = tui()
    terminal.send(b"qzx" + CTRL_D)  # one write: ctrl+d must see "qzx" in the editor
    terminal.wait_for_text("qzx")
    terminal.send(b"\x1b[D" + CTRL_D)  # left, then delete the "x"
    terminal.wait_until(lambda screen: "qzx" not in screen and "qz" in screen, "x deleted")
    assert terminal.alive
    terminal.send(CTRL_C)
    terminal.wait_for_gone("qz")
    terminal.send(CTRL_D)
    assert terminal.wait_exit() == 0


def test_no_color_paints_no_colour_at_all(tui: Start) -> None:
    import re

    terminal = tui(env={"NO_COLOR": "1"})
    terminal.send(b"plain")
    terminal.wait_for_text("plain")
    # SGR colour parameters: 30-37/40-47/90-97/100-107, 38;5;n / 48;5;n, 38;2;r;g;b / 48;2;...
    colour = re.compile(rb"\x1b\[(?:[0-9;]*;)?(?:3[0-7]|4[0-7]|9[0-7]|10[0-7]|[34]8;[25];)[0-9;]*m")
    assert not colour.search(terminal.output), colour.search(terminal.output)
    terminal.send(CTRL_C + CTRL_D)  # in one read too: clear, then quit on the empty editor
    assert terminal.wait_exit() == 0
