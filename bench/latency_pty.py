"""Latency as a person feels it: the installed ``picode`` command in a pseudo-terminal,
against a local streaming server, beside a bare Textual app doing the same job.

    python bench/latency_pty.py [--rounds 24]

Each round, in one running app: type a prompt and press Enter (→ the request reaches the
server: **Enter → request**); while the ~8 kB reply streams, type a character three times
(→ its bytes are written to the terminal: **key → echo**, then Backspace); press Esc
(→ the server sees the connection close: **Esc → closed**; → "Interrupted" is written to
the terminal: **Esc → painted**). Every other round Esc is sent as a terminal speaking the
kitty keyboard protocol sends it (``CSI 27 u``, which Textual asks for at start), where no
escape delay applies. Times are taken from the write to the pty master to the
server's record (same clock) or to the read that brought the bytes back.

The baseline is a bare Textual app (an ``Input``, a ``Log`` the reply's bytes are appended
to, httpx streaming from the same server; Esc cancels and mounts "Interrupted") run through
the same pty with picode's driver, so the difference is what picode itself adds. Both run
with ``ESCDELAY=10`` (picode's default): what a lone ESC byte must wait before it is a key.
The apps run in turns, one round each, so load on a shared machine hits both alike.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.cli.apis import AnthropicDriver, use
from tests.cli.harness import PicodeEnv
from tests.cli.terminal import CTRL_C, ENTER, ESCAPE, Terminal
from tests.wire.anthropic_protocol import AnthropicStream
from tests.wire.server import Chunk, Pause, RecordedRequest, Stall, WireResponse, WireServer

from _stats import Summary, fmt, machine, verdict

PICODE_COMMAND = [str(Path(sys.executable).parent / "picode")]
REPLY_PIECES = 256  # × 32 characters: an 8 kB reply
PIECE_PAUSE_S = 0.008  # about 2 s for the whole reply: a fast model
KITTY_ESCAPE = b"\x1b[27u"  # Esc under the kitty keyboard protocol: no escape delay
ECHO_CHAR = "ж"  # never in the reply, so its bytes in the output are the echo
ECHO_PROBES = 3
PROBE_GAP_S = 0.3
TARGETS = {"esc_closed": 0.015, "echo": 0.030}

BARE_APP = r"""
import asyncio
import json
import sys
import httpx
from textual.app import App
from textual.containers import VerticalScroll
from textual.widgets import Input, Static
from picode.tui.driver import PromptEscDriver

URL = sys.argv[1]

class Bare(App):
    AUTO_FOCUS = "Input"

    def get_driver_class(self):
        return PromptEscDriver

    def compose(self):
        yield VerticalScroll()
        yield Input(placeholder="Ready")

    def on_mount(self):
        self.client = httpx.AsyncClient(timeout=None)

    def on_input_submitted(self, event):
        event.input.value = ""
        self.reply = asyncio.get_running_loop().create_task(self.stream())

    async def stream(self):
        reply = Static()
        await self.query_one(VerticalScroll).mount(reply)
        text = ""
        async with self.client.stream("POST", URL + "/v1/messages", json={}) as response:
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    delta = json.loads(line[6:]).get("delta", {})
                    text += delta.get("text", "")
                    reply.update(text)
                    self.query_one(VerticalScroll).scroll_end(animate=False)

    def on_key(self, event):
        if event.key == "escape":
            self.reply.cancel()
            self.query_one(VerticalScroll).mount(Static("Interrupted"))

Bare().run()
"""


def reply(_request: RecordedRequest) -> WireResponse:
    """Paragraphs of about 500 characters (with some **bold** and `code`), 32 a piece."""
    text = ""
    while len(text) < REPLY_PIECES * 32:
        text += "The quick brown fox jumps over the **lazy** dog, `twice`. " * 8 + "\n\n"
    pieces = [text[i : i + 32] for i in range(0, REPLY_PIECES * 32, 32)]
    stream = AnthropicStream().text("Zebrafish ", *pieces, stop=False)
    body: list[Chunk] = []
    for chunk in stream.body():
        body += [chunk, Pause(PIECE_PAUSE_S)]
    return WireResponse(body=[*body, Stall()])


@dataclass
class Samples:
    enter_request: list[float] = field(default_factory=list)
    echo: list[float] = field(default_factory=list)
    esc_closed: list[float] = field(default_factory=list)
    esc_painted: list[float] = field(default_factory=list)
    #: The same with Esc as a terminal speaking the kitty keyboard protocol sends it.
    kitty_closed: list[float] = field(default_factory=list)
    kitty_painted: list[float] = field(default_factory=list)
    #: Rounds whose Esc was not seen within 10 s (then stopped with a second Esc).
    missed_esc: int = 0


def one_round(terminal: Terminal, wire: WireServer, samples: Samples, kitty: bool) -> None:
    count = len(wire.requests)
    since = len(terminal.output)
    terminal.send(b"go")
    pressed = time.monotonic()
    terminal.send(ENTER)
    assert wire.wait_for_requests(count + 1, timeout=30), "no request reached the server"
    request = wire.requests[count]
    samples.enter_request.append(request.received_at - pressed)
    terminal.wait_for_bytes(b"Zebrafish", since, timeout=30)
    for _ in range(ECHO_PROBES):
        time.sleep(PROBE_GAP_S)  # the reply keeps streaming meanwhile
        since = len(terminal.output)
        pressed = time.monotonic()
        terminal.send(ECHO_CHAR.encode())
        samples.echo.append(terminal.wait_for_bytes(ECHO_CHAR.encode(), since, 10) - pressed)
        terminal.send(b"\x7f")
    time.sleep(PROBE_GAP_S)
    assert request.closed_at is None, "the reply ended before Esc: make it longer"
    since = len(terminal.output)
    pressed = time.monotonic()
    terminal.send(KITTY_ESCAPE if kitty else ESCAPE)
    try:
        painted = terminal.wait_for_bytes(b"Interrupted", since, 10)
    except AssertionError:
        samples.missed_esc += 1
        terminal.send(ESCAPE)
        assert request.wait_closed(10), "a second Esc did not close the connection either"
        time.sleep(PROBE_GAP_S)
        return
    assert request.wait_closed(10), "Esc did not close the connection"
    assert request.closed_at is not None
    closed, shown = (
        (samples.kitty_closed, samples.kitty_painted)
        if kitty
        else (samples.esc_closed, samples.esc_painted)
    )
    closed.append(request.closed_at - pressed)
    shown.append(painted - pressed)
    time.sleep(PROBE_GAP_S)  # let the app settle to idle before the next prompt


def start_picode(wire: WireServer, root: Path, command: list[str] | None = None) -> Terminal:
    """picode at its prompt, session open. As for a person, this is not the first start on
    the machine: one start before it, quit at once, leaves picode's cache folder as a
    second start finds it (compiled dataclass methods and patterns)."""
    root.mkdir()
    env = PicodeEnv(root)
    env.env.pop("NO_COLOR")  # colours as a person has them (NO_COLOR adds a filter pass)
    api = use(AnthropicDriver(), wire, env)
    for warm_up in (True, False):
        terminal = Terminal(
            ["--model", api.model],
            cwd=env.project,
            env=env.env,
            command=command or PICODE_COMMAND,
        )
        terminal.wait_for_text("↑0 ↓0", timeout=60)  # the session is open
        if warm_up:
            terminal.send(CTRL_C)
            terminal.send(CTRL_C)
            terminal.wait_exit(60)
            terminal.close()
    return terminal


def start_bare(wire: WireServer, root: Path) -> Terminal:
    root.mkdir()
    env = PicodeEnv(root)
    env.env.pop("NO_COLOR")
    env.env["ESCDELAY"] = "10"  # what picode sets for itself
    terminal = Terminal(
        [wire.url], cwd=env.project, env=env.env, command=[sys.executable, "-c", BARE_APP]
    )
    terminal.wait_for_text("Ready", timeout=60)
    return terminal


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10, method="inclusive")[-1]


def report(
    name: str,
    measure: Callable[[Samples], list[float]],
    picode: Samples,
    bare: Samples,
    target: float | None,
) -> None:
    ours, base = Summary.of(measure(picode)), Summary.of(measure(bare))
    goal = ""
    if target is not None:
        goal = f"  target ≤ {target * 1e3:.0f} ms: {verdict(ours.median <= target)}"
    print(
        f"{name:22s} picode {fmt(ours)} p90 {p90(measure(picode)) * 1e3:.1f} | "
        f"bare {fmt(base)} p90 {p90(measure(bare)) * 1e3:.1f} | "
        f"× {ours.ratio(base):.2f} | n={ours.runs}{goal}"
    )


def thirds(name: str, ours: list[float], base: list[float]) -> None:
    """Medians over the first, middle and last third of the samples, in the order taken:
    each round adds entries to the transcript, so a cost that grows with the conversation
    shows as a rising row."""

    def row(values: list[float]) -> str:
        size = max(1, len(values) // 3)
        parts = [values[:size], values[size : 2 * size], values[2 * size :]]
        return " → ".join(f"{statistics.median(part) * 1e3:.1f}" for part in parts if part)

    print(f"{name:22s} picode {row(ours)} ms | bare {row(base)} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40, help="half of them with kitty Esc")
    rounds = parser.parse_args().rounds
    print(machine(), flush=True)
    results = {"picode": Samples(), "bare": Samples()}
    with WireServer() as wire, tempfile.TemporaryDirectory() as tmp:
        wire.default_responder = reply
        terminals = {
            "picode": start_picode(wire, Path(tmp) / "picode"),
            "bare": start_bare(wire, Path(tmp) / "bare"),
        }
        try:
            for terminal in terminals.values():
                terminal.render = False  # bytes are searched; the screen is not needed
            for terminal in terminals.values():
                one_round(terminal, wire, Samples(), False)  # the first request imports the SDK
            for index in range(rounds):
                for name, terminal in terminals.items():
                    one_round(terminal, wire, results[name], kitty=index % 2 == 1)
        finally:
            for terminal in terminals.values():
                terminal.close()
    picode, bare = results["picode"], results["bare"]
    print(
        f"{rounds} rounds (Esc: half legacy ESC byte, half kitty CSI 27 u); ESCDELAY 10 ms; "
        f"reply {REPLY_PIECES * 32 // 1024} kB in ~2 s"
    )
    report("Enter → request", lambda s: s.enter_request, picode, bare, None)
    report("key → echo (streaming)", lambda s: s.echo, picode, bare, TARGETS["echo"])
    thirds("echo by thirds of the conversation", picode.echo, bare.echo)
    report("Esc → closed", lambda s: s.esc_closed, picode, bare, TARGETS["esc_closed"])
    report("Esc → painted", lambda s: s.esc_painted, picode, bare, None)
    report("kitty Esc → closed", lambda s: s.kitty_closed, picode, bare, TARGETS["esc_closed"])
    report("kitty Esc → painted", lambda s: s.kitty_painted, picode, bare, None)
    print(f"Esc not seen within 10 s: picode {picode.missed_esc}, bare {bare.missed_esc} rounds")


if __name__ == "__main__":
    main()
