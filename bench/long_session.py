"""A long conversation in the installed ``picode``: memory, lag and CPU that must not grow
with it (issue 33).

    python bench/long_session.py [--replies 60] [--idle 10]
    python bench/long_session.py --replies 300
    python bench/long_session.py --anchors DIR    # pi and Claude Code installed with npm in DIR
    python bench/long_session.py --compare OTHER/.venv/bin/picode   # another build, in turns
    python bench/long_session.py --replies 6 --streams 5 --anchors DIR   # streaming CPU

The app runs in a pseudo-terminal (120×36) against a local Anthropic-compatible server
(the wire server of the tests). Each prompt gets a different reply of about 8.5 kB of
Markdown (headings, paragraphs with **bold** and `code`, lists, a fenced code block), sent
at once, ending in a word of its own; per reply the bench records

- **lag**: Enter → the reply's last word written to the terminal;
- **RSS**: the app's resident memory (``VmRSS`` from /proc, every process it started
  included) once the reply is shown and the app has settled.

Before the first and after the last of those replies ``--streams`` more replies of the
same size (one unless told; the apps in turns) stream at about 100 deltas a second: the
app's **CPU share** over that time (user + system, from /proc, every thread and child),
the median of those before and of those after. At the end the app is left
alone past the editor's blink time, then its **idle CPU** is read over ``--idle`` seconds
(the method of bench/idle_cpu.py).

RSS growth per reply is the least-squares slope over the replies after the first five
(the first ones still warm caches up). Lag growth compares the median of the first six
replies with that of the last six. With ``--anchors DIR``, pi
(``@mariozechner/pi-coding-agent``) and Claude Code (``@anthropic-ai/claude-code``) run from
``DIR/node_modules/.bin`` against the same server, one reply each in turn with picode, so
load on a shared machine hits all alike. Linux only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.cli.terminal import ENTER, Terminal
from tests.wire.anthropic_protocol import AnthropicStream
from tests.wire.server import Chunk, Pause, RecordedRequest, WireResponse, WireServer

from _stats import machine
from idle_cpu import cpu_seconds
from latency_pty import start_picode
from picode.tui.widgets.editor import BLINK_FOR_S

REPLY_BYTES = 8_500
STREAM_DELTA_S = 0.01  # ~100 deltas a second: a model's pace
SETTLE_S = 0.3
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
TARGETS = {"rss_per_reply_mb": 0.15, "lag_ratio_60": 1.1, "lag_ratio_300": 1.2, "idle": 0.1}


def markdown_reply(number: int) -> str:
    """About ``REPLY_BYTES`` of Markdown, different for every ``number``."""
    parts: list[str] = [f"## Answer {number}\n\n"]
    section = 0
    while sum(map(len, parts)) < REPLY_BYTES - 400:
        section += 1
        parts.append(
            f"### Step {section} of reply {number}\n\n"
            + "The quick brown fox jumps over the **lazy** dog, `twice`, and reads "
            f"`src/module_{number}_{section}.py` before it edits anything. "
            * 3
            + "\n\n"
            + f"- item one of step {section}\n- item two with *emphasis*\n"
            "- item three, a [link](https://example.invalid/a)\n\n"
            "```python\n"
            f"def step_{section}(value: int) -> int:\n"
            f"    return value * {number} + {section}  # a comment\n"
            "```\n\n"
        )
    text = "".join(parts)
    return text + f"That is all for now: Endmark{number:04d}\n"


def marker(number: int) -> bytes:
    return f"Endmark{number:04d}".encode()


def at_once(number: int) -> WireResponse:
    text = markdown_reply(number)
    pieces = [text[i : i + 64] for i in range(0, len(text), 64)]
    return AnthropicStream().text(*pieces).stop().response()


def paced(number: int) -> WireResponse:
    """The same size at ~100 deltas a second (about 12 characters a delta, ~7 s)."""
    text = markdown_reply(number)
    pieces = [text[i : i + 12] for i in range(0, len(text), 12)]
    body: list[Chunk] = []
    for chunk in AnthropicStream().text(*pieces).stop().response().body:
        body += [chunk, Pause(STREAM_DELTA_S)]
    return WireResponse(body=body)


def rss_mb(pid: int) -> float:
    """VmRSS of ``pid`` and of every process below it (Claude Code and pi may spawn)."""
    total = 0.0
    for child in [pid, *_descendants(pid)]:
        try:
            for line in Path(f"/proc/{child}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) / 1024
        except OSError:
            continue
    return total


def _descendants(pid: int) -> list[int]:
    found: list[int] = []
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return found
    for child in map(int, children):
        found += [child, *_descendants(child)]
    return found


def tree_cpu_seconds(pid: int) -> float:
    total = 0.0
    for child in [pid, *_descendants(pid)]:
        try:
            total += cpu_seconds(child)
        except OSError:
            continue
    return total


@dataclass
class App:
    name: str
    terminal: Terminal
    #: Replies asked for so far (the wire server answers in the order the requests come).
    asked: int = 0
    lags: list[float] = field(default_factory=list)
    #: Enter → the request (history included) received whole by the server.
    request_lags: list[float] = field(default_factory=list)
    #: CPU seconds the app spent from Enter until the reply was shown and settled: unlike
    #: the lag, hardly moved by other work on a loaded machine.
    reply_cpu: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)
    stream_cpu: list[float] = field(default_factory=list)
    idle_cpu: float = float("nan")
    start_rss: float = 0.0


class Replies:
    """The server's responder: the next reply is whichever the bench announced."""

    def __init__(self) -> None:
        self.next: Callable[[], WireResponse] = lambda: at_once(0)

    def __call__(self, _request: RecordedRequest) -> WireResponse:
        return self.next()


def ask(
    app: App, wire: WireServer, replies: Replies, make: Callable[[int], WireResponse]
) -> tuple[int, int]:
    """Type a prompt (not sent yet) that ``make(number)`` answers: (number, requests so
    far)."""
    app.asked += 1
    number = app.asked
    replies.next = lambda: make(number)
    count = len(wire.requests)
    app.terminal.send(f"question {number}".encode())
    time.sleep(0.05)  # the editor shows what was typed before Enter sends it
    return number, count


def one_reply(app: App, wire: WireServer, replies: Replies) -> None:
    number, count = ask(app, wire, replies, at_once)
    since = len(app.terminal.output)
    cpu = tree_cpu_seconds(app.terminal.process.pid)
    pressed = time.monotonic()
    app.terminal.send(ENTER)
    assert wire.wait_for_requests(count + 1, timeout=30), f"{app.name}: no request"
    shown = app.terminal.wait_for_bytes(marker(number), since, timeout=60)
    app.lags.append(shown - pressed)
    app.request_lags.append(wire.requests[count].received_at - pressed)
    time.sleep(SETTLE_S)
    app.rss.append(rss_mb(app.terminal.process.pid))
    app.reply_cpu.append(tree_cpu_seconds(app.terminal.process.pid) - cpu)


def streamed_reply(app: App, wire: WireServer, replies: Replies) -> None:
    number, count = ask(app, wire, replies, paced)
    since = len(app.terminal.output)
    pid = app.terminal.process.pid
    cpu, started = tree_cpu_seconds(pid), time.monotonic()
    app.terminal.send(ENTER)
    assert wire.wait_for_requests(count + 1, timeout=30), f"{app.name}: no request"
    app.terminal.wait_for_bytes(marker(number), since, timeout=120)
    elapsed = time.monotonic() - started
    app.stream_cpu.append(100 * (tree_cpu_seconds(pid) - cpu) / elapsed)
    time.sleep(SETTLE_S)


def idle(app: App, seconds: float) -> None:
    time.sleep(BLINK_FOR_S + 2)
    pid = app.terminal.process.pid
    cpu, started = tree_cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    app.idle_cpu = 100 * (tree_cpu_seconds(pid) - cpu) / (time.monotonic() - started)


def start_other_picode(command: str, wire: WireServer, root: Path) -> Terminal:
    """Another build of picode (``--compare``), set up as ``start_picode`` sets up this one."""
    return start_picode(wire, root, command=[command])


# --- anchors -----------------------------------------------------------------------------


def start_anchor(name: str, folder: Path, wire: WireServer, root: Path) -> Terminal:
    """pi or Claude Code on the same server, ready for a prompt."""
    root.mkdir()
    project = root / "project"
    project.mkdir()
    home = root / "home"
    home.mkdir()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": wire.url,
        "ANTHROPIC_API_KEY": "bench-key",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
    }
    bin_dir = folder / "node_modules" / ".bin"
    if name == "claude":
        # The first-run questions answered ahead, as a person who used it before has them.
        (home / ".claude.json").write_text(
            json.dumps(
                {
                    "hasCompletedOnboarding": True,
                    "theme": "dark",
                    "customApiKeyResponses": {"approved": ["bench-key"[-20:]]},
                    "projects": {str(project): {"hasTrustDialogAccepted": True}},
                }
            )
        )
        command = [str(bin_dir / "claude"), "--model", "claude-sonnet-4-5"]
        ready = "? for shortcuts"
    else:
        # pi reads its endpoint from its own config, not from ANTHROPIC_BASE_URL.
        agent_dir = home / ".pi" / "agent"
        agent_dir.mkdir(parents=True)
        (agent_dir / "models.json").write_text(
            json.dumps({"providers": {"anthropic": {"baseUrl": wire.url}}})
        )
        env["PI_OFFLINE"] = "1"
        command = [str(bin_dir / "pi"), "--provider", "anthropic", "--model", "claude-sonnet-4-5"]
        ready = "claude-sonnet-4-5"
    terminal = Terminal([], cwd=project, env=env, command=command)
    terminal.wait_for_text(ready, timeout=60)
    time.sleep(1)
    return terminal


# --- report ------------------------------------------------------------------------------


def slope(values: list[float]) -> float:
    """Least-squares growth per step."""
    xs = range(len(values))
    if len(values) < 2:
        return float("nan")
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(values)
    num = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, values, strict=True))
    den = sum((x - mean_x) ** 2 for x in xs)
    return num / den


def summary(app: App) -> dict[str, float]:
    lags, rss = app.lags, app.rss
    first, last = statistics.median(lags[:6]), statistics.median(lags[-6:])
    sent = app.request_lags
    return {
        "cpu_first": statistics.median(app.reply_cpu[:6]),
        "cpu_last": statistics.median(app.reply_cpu[-6:]),
        "request_first": statistics.median(sent[:6]),
        "request_last": statistics.median(sent[-6:]),
        "rss_start": app.start_rss,
        "rss_after_warmup": rss[min(4, len(rss) - 1)],
        "rss_end": rss[-1],
        "rss_per_reply": slope(rss[5:]) if len(rss) > 6 else slope(rss),
        "lag_first": first,
        "lag_last": last,
        "lag_ratio": last / first,
        # Medians of the ``--streams`` streamed replies before and after the others.
        "stream_cpu_first": statistics.median(app.stream_cpu[: len(app.stream_cpu) // 2]),
        "stream_cpu_last": statistics.median(app.stream_cpu[len(app.stream_cpu) // 2 :]),
        "idle_cpu": app.idle_cpu,
    }


def report(apps: list[App], replies: int) -> None:
    print(machine())
    print(
        f"\n### {replies} replies of ~{REPLY_BYTES / 1000:.1f} kB in one conversation "
        "(120×36 pty, local Anthropic-compatible server)\n"
    )
    sums = {app.name: summary(app) for app in apps}
    names = list(sums)

    def ms(value: float) -> str:
        return f"{value * 1e3:.0f} ms"

    rows: list[tuple[str, str, Callable[[float], str]]] = [
        ("RSS at the prompt, before any reply", "rss_start", lambda v: f"{v:.1f} MB"),
        ("RSS after 5 replies", "rss_after_warmup", lambda v: f"{v:.1f} MB"),
        (f"RSS after {replies} replies", "rss_end", lambda v: f"{v:.1f} MB"),
        ("RSS growth per reply (slope after the 5th)", "rss_per_reply", lambda v: f"{v:.3f} MB"),
        ("Enter → last line, median of the first 6", "lag_first", lambda v: f"{v * 1e3:.0f} ms"),
        ("Enter → last line, median of the last 6", "lag_last", lambda v: f"{v * 1e3:.0f} ms"),
        ("lag last 6 / first 6", "lag_ratio", lambda v: f"{v:.2f}×"),
        ("of which Enter → request received, first 6", "request_first", ms),
        ("of which Enter → request received, last 6", "request_last", ms),
        ("CPU time per reply (Enter → settled), first 6", "cpu_first", ms),
        ("CPU time per reply (Enter → settled), last 6", "cpu_last", ms),
        ("CPU while streaming ~100 deltas/s, first", "stream_cpu_first", lambda v: f"{v:.1f} %"),
        (
            f"CPU while streaming ~100 deltas/s, after {replies}",
            "stream_cpu_last",
            lambda v: f"{v:.1f} %",
        ),
        ("idle CPU after the last reply", "idle_cpu", lambda v: f"{v:.3f} %"),
    ]
    print("| measure | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for label, key, show in rows:
        print(f"| {label} | " + " | ".join(show(sums[n][key]) for n in names) + " |")
    if len(names) > 1:
        base = sums["picode"]
        for other in names[1:]:
            print(f"\npicode / {other}: ", end="")
            print(
                ", ".join(
                    f"{key} {base[key] / sums[other][key]:.2f}×"
                    for key in ("rss_after_warmup", "rss_per_reply", "stream_cpu_first")
                    if sums[other][key]
                )
            )
    ours = sums["picode"]
    target = TARGETS["lag_ratio_300" if replies >= 300 else "lag_ratio_60"]
    print(
        f"\ntargets: RSS growth ≤ {TARGETS['rss_per_reply_mb']} MB/reply: "
        f"{'met' if ours['rss_per_reply'] <= TARGETS['rss_per_reply_mb'] else 'missed'}; "
        f"lag ratio ≤ {target}: {'met' if ours['lag_ratio'] <= target else 'missed'}; "
        f"idle ≤ {TARGETS['idle']} %: {'met' if ours['idle_cpu'] <= TARGETS['idle'] else 'missed'}"
    )
    print("\nper reply (picode): Enter → last line ms / of which Enter → request ms / RSS MB")
    app = apps[0]
    for start in range(0, len(app.lags), 10):
        end = start + 10
        cells = [
            f"{lag * 1e3:.0f}/{sent * 1e3:.0f}/{rss:.1f}"
            for lag, sent, rss in zip(
                app.lags[start:end], app.request_lags[start:end], app.rss[start:end], strict=True
            )
        ]
        print(f"  {start + 1:4d}: " + " ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replies", type=int, default=60)
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of idle measured")
    parser.add_argument(
        "--streams", type=int, default=1, help="streamed replies before and after (median)"
    )
    parser.add_argument("--anchors", type=Path, help="npm folder with pi and Claude Code")
    parser.add_argument(
        "--compare", help="another picode command (an older build) run the same way, in turns"
    )
    args = parser.parse_args()
    print(machine(), flush=True)
    replies = Replies()
    with WireServer() as wire, tempfile.TemporaryDirectory() as tmp:
        wire.default_responder = replies
        apps = [App("picode", start_picode(wire, Path(tmp) / "picode"))]
        if args.compare:
            other = start_other_picode(args.compare, wire, Path(tmp) / "compare")
            apps.append(App("compared picode", other))
        if args.anchors is not None:
            for name in ("pi", "claude"):
                terminal = start_anchor(name, args.anchors.resolve(), wire, Path(tmp) / name)
                apps.append(App(name, terminal))
        try:
            for app in apps:
                app.terminal.render = False  # bytes are searched; the screen is not needed
                time.sleep(1)
                app.start_rss = rss_mb(app.terminal.process.pid)
                one_reply(app, wire, replies)  # the first request imports the SDK: not counted
                app.lags.clear()
                app.request_lags.clear()
                app.reply_cpu.clear()
                app.rss.clear()
            for _ in range(args.streams):
                for app in apps:
                    streamed_reply(app, wire, replies)
            for index in range(args.replies):
                for app in apps:
                    one_reply(app, wire, replies)
                if (index + 1) % 20 == 0:
                    print(f"  {index + 1} replies", file=sys.stderr, flush=True)
            for _ in range(args.streams):
                for app in apps:
                    streamed_reply(app, wire, replies)
            for app in apps:
                idle(app, args.idle)
        finally:
            for app in apps:
                app.terminal.close()
    report(apps, args.replies)


if __name__ == "__main__":
    main()
