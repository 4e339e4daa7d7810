"""CPU and wake-ups of an idle picode: the installed command in a pseudo-terminal, one reply
shown, the editor focused and nothing happening, beside a bare Textual app doing the same.

    python bench/idle_cpu.py [--seconds 30] [--rounds 3]

After the reply is on screen each app is left alone past the editor's blink time
(``BLINK_FOR_S``), then its CPU time (user + system, every thread, from /proc) and its
threads' voluntary context switches (each one a wake-up) are read over ``--seconds``. The
baseline is the bare Textual app of latency_pty.py (an ``Input`` with Textual's blinking
cursor, Textual's input thread), so the ratio shows what picode does differently. Linux only.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.cli.terminal import ENTER, Terminal
from tests.wire.anthropic_protocol import AnthropicStream
from tests.wire.server import RecordedRequest, WireResponse, WireServer

from _stats import machine, verdict
from latency_pty import REPLY_PIECES, start_bare, start_picode
from picode.tui.widgets.editor import BLINK_FOR_S

TARGET_PERCENT = 0.1
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def reply(_request: RecordedRequest) -> WireResponse:
    """About 8 kB of Markdown, sent at once, and the reply ends (the run is over)."""
    text = ("The quick brown fox jumps over the **lazy** dog, `twice`. " * 8 + "\n\n") * 20
    pieces = [text[i : i + 32] for i in range(0, REPLY_PIECES * 32, 32)]
    return AnthropicStream().text("Zebrafish ", *pieces, " Endmark").stop().response()


def _app_pid(terminal: Terminal) -> int:
    """The app's process: the pty's child ``exec``s into it."""
    return terminal.process.pid


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def wakeups(pid: int) -> int:
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            status = (task / "status").read_text()
        except OSError:
            continue  # a thread that ended meanwhile
        for line in status.splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                total += int(line.split()[1])
    return total


def idle(terminal: Terminal, wire: WireServer, seconds: float) -> tuple[float, float]:
    """(CPU %, wake-ups a second) over ``seconds`` once the reply is shown and settled."""
    terminal.send(b"go")
    terminal.send(ENTER)
    assert wire.wait_for_requests(1, timeout=30)
    terminal.wait_for_text("Endmark", timeout=60)  # on the screen: the reply is shown
    terminal.render = False
    time.sleep(BLINK_FOR_S + 2)  # past the blink, and whatever the reply left to settle
    pid = _app_pid(terminal)
    cpu, woke, start = cpu_seconds(pid), wakeups(pid), time.monotonic()
    time.sleep(seconds)
    elapsed = time.monotonic() - start
    return (
        100 * (cpu_seconds(pid) - cpu) / elapsed,
        (wakeups(pid) - woke) / elapsed,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results: dict[str, list[tuple[float, float]]] = {"picode": [], "bare Textual app": []}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            for name, start in (("picode", start_picode), ("bare Textual app", start_bare)):
                with WireServer() as wire:
                    wire.default_responder = reply
                    terminal = start(wire, Path(tmp) / f"{name.split()[0]}-{round_}")
                    try:
                        results[name].append(idle(terminal, wire, args.seconds))
                    finally:
                        terminal.close()
    print(machine())
    print(f"\n### Idle: {args.rounds} rounds of {args.seconds:g} s each, after one reply\n")
    print("| app | CPU % (each round) | wake-ups / s (each round) | target ≤ 0.1 % |")
    print("|---|---|---|---|")
    for name, rounds in results.items():
        cpu = ", ".join(f"{c:.3f}" for c, _ in rounds)
        woke = ", ".join(f"{w:.1f}" for _, w in rounds)
        goal = verdict(max(c for c, _ in rounds) <= TARGET_PERCENT) if name == "picode" else ""
        print(f"| {name} | {cpu} | {woke} | {goal} |")


if __name__ == "__main__":
    main()
