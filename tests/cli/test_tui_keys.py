"""Keys through a real pseudo-terminal: a lone Esc byte interrupts a streaming reply, and
escape sequences split across writes (Alt+key, arrows, CSI keys with parameters, the
kitty keyboard protocol's Esc) still arrive as the one key they encode."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest

pytest.importorskip("pyte")
pytest.importorskip("pty")  # POSIX only: it needs termios

from tests.cli.apis import AnthropicDriver
from tests.cli.terminal import ESCAPE, Start, Terminal
from tests.wire.server import Stall, WireServer

API = AnthropicDriver()
PASTE_START = b"\x1b[200~"
PASTE_END = b"\x1b[201~"


#: Between the bytes of a split sequence: far below the ESCDELAY these tests set (500 ms),
#: far above the time a terminal takes to write one.
BYTE_GAP_S = 0.01
SPLIT_ESCDELAY = {"ESCDELAY": "500"}  # a loaded machine may pause the writer for longer
KITTY_ESCAPE = b"\x1b[27u"


def send_bytewise(terminal: Terminal, keys: bytes) -> None:
    for byte in keys:
        terminal.send(bytes([byte]))
        time.sleep(BYTE_GAP_S)


def editor_shows(text: str) -> Callable[[str], bool]:
    """The editor box (not the transcript) holds ``text`` at the start of its first line."""
    return lambda screen: any(line.startswith(f"│ {text}") for line in screen.splitlines())


def test_a_lone_esc_byte_stops_a_streaming_reply(tui: Start, wire: WireServer) -> None:
    wire.enqueue(API.text_then("Streaming along", Stall()))
    terminal = tui()
    terminal.type("go")
    terminal.wait_for_text("Streaming along")

    terminal.send(ESCAPE)

    assert wire.requests[0].wait_closed(), "Esc must close the upstream connection"
    terminal.wait_for_text("Interrupted")


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        (PASTE_START + b"pasted" + PASTE_END, "pasted"),  # the bracketed paste markers
    ],
    ids=["bracketed-paste"],
)
def test_escape_sequences_written_byte_by_byte_are_one_key(
    tui: Start, keys: bytes, expected: str
) -> None:
    terminal = tui(env=SPLIT_ESCDELAY)
    terminal.wait_for_text("↑0 ↓0")  # the session is open: the real editor has the keys
    send_bytewise(terminal, keys)

    screen = terminal.wait_for_text(expected)

    assert "[200~" not in screen and "[201~" not in screen


@pytest.mark.parametrize(
    ("typed", "keys", "expected"),
    [
        (b"ac", b"\x1b[D", "abc"),  # left arrow, then "b"
        (b"one two", b"\x1b[1;5D", "one btwo"),  # ctrl+left: a CSI key with parameters
        (b"xyz", b"\x1b[H", "bxyz"),  # home
    ],
    ids=["left-arrow", "ctrl-left", "home"],
)
def test_cursor_keys_written_byte_by_byte_move_the_cursor(
    tui: Start, typed: bytes, keys: bytes, expected: str
) -> None:
    terminal = tui(env=SPLIT_ESCDELAY)
    terminal.wait_for_text("↑0 ↓0")
    terminal.send(typed)
    terminal.wait_until(editor_shows(typed.decode()), "the typed text")
    send_bytewise(terminal, keys)
    terminal.send(b"b")

    terminal.wait_until(editor_shows(expected), repr(expected))


def test_up_arrow_written_byte_by_byte_recalls_the_last_message(
    tui: Start, wire: WireServer
) -> None:
    wire.enqueue(API.text("Answered."))
    terminal = tui(env=SPLIT_ESCDELAY)
    terminal.wait_for_text("↑0 ↓0")
    terminal.type("first message")
    terminal.wait_for_text("Answered.")
    terminal.wait_until(editor_shows("Ask picode…"), "the emptied editor")

    send_bytewise(terminal, b"\x1b[A")

    terminal.wait_until(editor_shows("first message"), "the recalled message")


def test_alt_enter_written_byte_by_byte_queues_a_follow_up_instead_of_interrupting(
    tui: Start, wire: WireServer
) -> None:
    wire.enqueue(API.text_then("Streaming along", Stall()))
    terminal = tui(env=SPLIT_ESCDELAY)
    terminal.type("go")
    terminal.wait_for_text("Streaming along")
    terminal.send(b"later please")

    send_bytewise(terminal, b"\x1b\r")  # Alt+Enter: ESC, then the key

    screen = terminal.wait_for_text("follow-up: later please")
    assert "Interrupted" not in screen
    assert not wire.requests[0].wait_closed(0.2), "the reply must go on streaming"


def test_the_kitty_protocol_is_asked_for_and_its_esc_interrupts_at_once(
    tui: Start, wire: WireServer
) -> None:
    wire.enqueue(API.text_then("Streaming along", Stall()))
    # An Esc held back for the escape delay would not interrupt within this test's wait.
    terminal = tui(env={"ESCDELAY": "30000"})
    # Textual's progressive enhancement request: disambiguate, all keys, associated text.
    assert b"\x1b[>25u" in terminal.output
    terminal.type("go")
    terminal.wait_for_text("Streaming along")

    send_bytewise(terminal, KITTY_ESCAPE)

    assert wire.requests[0].wait_closed(10), "the kitty-encoded Esc must close the stream"
    terminal.wait_for_text("Interrupted")


def test_a_cursor_key_and_the_text_typed_after_it_keep_their_order(tui: Start) -> None:
    terminal = tui()
    terminal.wait_for_text("↑0 ↓0")
    terminal.send(b"ac")
    terminal.wait_until(editor_shows("ac"), "the typed text")

    terminal.send(b"\x1b[Db")  # one read: the arrow's binding must not run after the "b"

    terminal.wait_until(editor_shows("abc"), "'abc'")


PAGE_UP = b"\x1b[5~"


def test_ten_pageup_keys_in_one_write_scroll_ten_pages(tui: Start, wire: WireServer) -> None:
    rows = "\n".join(f"row {number:03d}" for number in range(1, 501))
    wire.enqueue(API.text(f"```\n{rows}\n```\n\nThe end."))
    terminal = tui()
    terminal.wait_for_text("↑0 ↓0")
    terminal.type("long please")
    terminal.wait_for_text("The end.")

    def shown(screen: str) -> list[int]:
        return [int(number) for number in re.findall(r"row (\d{3})", screen)]

    bottom = shown(terminal.text())
    page = len(bottom)
    assert page > 10 and max(bottom) == 500
    terminal.send(PAGE_UP * 10)  # one write, as a held key or a fast typist sends them

    # One page per key: the top row moves up ten pages (one would leave it near 500).
    screen = terminal.wait_until(
        lambda text: bool(shown(text)) and max(shown(text)) <= 500 - 8 * page,
        "ten pages up",
    )
    # And not much further than ten pages from where it started (a page is the viewport,
    # a little taller than the rows shown beside "The end.").
    assert min(shown(screen)) >= min(bottom) - 12 * page
