"""Keys through a real pseudo-terminal: a lone Esc byte interrupts a streaming reply, and
escape sequences split across writes still arrive as one key."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest

pytest.importorskip("pyte")
pytest.importorskip("pty")  # POSIX only: it needs termios

from tests.cli.apis import AnthropicDriver, use
from tests.cli.harness import PicodeEnv
from tests.cli.terminal import ESCAPE, Terminal
from tests.wire.server import Stall, WireServer

API = AnthropicDriver()
READY = "Ask picode…"
PASTE_START = b"\x1b[200~"
PASTE_END = b"\x1b[201~"

Start = Callable[..., Terminal]


@pytest.fixture
def tui(wire: WireServer, picode: PicodeEnv) -> Iterator[Start]:
    use(API, wire, picode)
    started: list[Terminal] = []

    def start(env: dict[str, str] | None = None) -> Terminal:
        terminal = Terminal(
            ["--model", API.model], cwd=picode.project, env={**picode.env, **(env or {})}
        )
        started.append(terminal)
        terminal.wait_for_text(READY)
        return terminal

    try:
        yield start
    finally:
        for terminal in started:
            terminal.close()


def send_bytewise(terminal: Terminal, keys: bytes) -> None:
    for byte in keys:
        terminal.send(bytes([byte]))


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
    # Generous: a loaded machine may pause the writer between bytes longer than 10 ms.
    terminal = tui(env={"ESCDELAY": "500"})
    terminal.wait_for_text("↑0 ↓0")  # the session is open: the real editor has the keys
    send_bytewise(terminal, keys)

    screen = terminal.wait_for_text(expected)

    assert "[200~" not in screen and "[201~" not in screen


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
    assert min(shown(screen)) >= 500 - 12 * page  # and not much further than ten
