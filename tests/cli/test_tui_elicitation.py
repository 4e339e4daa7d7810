"""A server's request for input answered in the real TUI, in a pty: the form shows the
server's words escaped, checks a wrong value, and sends the answer."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyte")
pytest.importorskip("pty")  # POSIX only: it needs termios

from tests.cli.apis import AnthropicDriver
from tests.cli.harness import PicodeEnv
from tests.cli.terminal import Terminal
from tests.cli.test_mcp_modes import mcp_config
from tests.session.mcp.conftest import recorded
from tests.wire.server import WireServer

API = AnthropicDriver()
TAB, CTRL_S = b"\t", b"\x13"


def test_the_form_round_trip_in_a_terminal(
    tui: object, wire: WireServer, picode: PicodeEnv, tmp_path: Path
) -> None:
    record = tmp_path / "record.txt"
    picode.add_config(mcp_config(record))
    wire.enqueue(API.tool_call("call_1", "mcp__files__book", {}), API.text("Table booked."))
    terminal: Terminal = tui()  # type: ignore[operator]
    # The server connects in the background: /mcp again until it says it is ready.
    for _ in range(30):
        terminal.type("/mcp")
        if terminal.poll(lambda text: "files  ready (" in text, 1.0) is not None:
            break
    terminal.wait_for_text("files  ready (", timeout=0)
    terminal.type("book a table")
    screen = terminal.wait_for_text("MCP server 'files' asks:")
    # The server's escape sequence is spelled out, not obeyed (it would clear the screen).
    assert "Chez MCP?" in screen and "␛[2J" in screen
    terminal.send(b"A")
    terminal.send(CTRL_S)
    terminal.wait_for_text("at least 2 characters")
    terminal.send(b"da")
    terminal.wait_for_text("Ada")
    # Keys typed faster than the app moves the focus would land in the old field: the hint
    # says when the next one has it.
    terminal.send(TAB)
    terminal.wait_for_text("› Guests ·")
    terminal.send(b"4")
    terminal.send(CTRL_S)
    terminal.wait_for_text("Table booked.")
    assert "book accept" in recorded(record)
    request = wire.requests[-1].body.decode()
    assert "booked: Ada, 4, vegan=False, inside" in request
