"""Notifications through a real pseudo-terminal: picode asks for focus reports, and a reply
that ends after the terminal reported losing focus writes the configured OSC 777."""

from __future__ import annotations

import pytest

pytest.importorskip("pyte")
pytest.importorskip("pty")  # POSIX only: it needs termios

from tests.cli.harness import PicodeEnv
from tests.cli.terminal import Start
from tests.wire.anthropic_protocol import AnthropicStream
from tests.wire.server import Pause, WireServer

FOCUS_REPORTS_ON = b"\x1b[?1004h"
FOCUS_OUT = b"\x1b[O"
DONE = b"\x1b]777;notify;picode;done\x07"
#: The reply holds this long after its first words: far longer than the focus-out takes to
#: reach the app, so the run surely ends unfocused.
HOLD_S = 3.0


def test_a_reply_ending_after_focus_out_sends_the_notification(
    tui: Start, wire: WireServer, picode: PicodeEnv
) -> None:
    picode.add_config('[notifications]\nmethod = "osc777"')
    stream = AnthropicStream().text("Working on it", stop=False).chunk(Pause(HOLD_S))
    wire.enqueue(stream.block_stop(0).stop().response())
    terminal = tui()
    assert FOCUS_REPORTS_ON in terminal.output
    terminal.wait_for_text("↑0 ↓0")  # the session is open
    terminal.type("go")
    terminal.wait_for_text("Working on it")
    since = len(terminal.output)

    terminal.send(FOCUS_OUT)

    terminal.wait_for_bytes(DONE, since)
    assert DONE not in terminal.output[:since]
