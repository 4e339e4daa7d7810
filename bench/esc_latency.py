"""Esc latency in the real TUI: Esc → upstream connection closed, Esc → UI idle (SPEC §8).

The real ``PicodeApp`` runs headless on a real ``AgentSession`` whose model is an
``anthropic-messages`` model pointed (through ``ANTHROPIC_BASE_URL``) at the wire test server
on 127.0.0.1. The server streams a long reply slowly (a pause between SSE events, then it
stalls and keeps the connection open). Once some of the reply is on screen, Esc is pressed
through the pilot, and the script measures:

- closed: Esc → the server saw the client close the socket (``RecordedRequest.closed_at``,
  taken by the server thread on the same monotonic clock);
- abort(): Esc → ``AgentSession.abort()`` was called (key dispatch and the Esc chain);
- idle: Esc → ``session.is_running`` is False and the "Interrupted" marker is painted.

Baseline, measured in the same process and event loop between the app runs: a bare httpx
streaming request to the same server, closed by the client mid-body; its time is "close
called → the server saw the socket close", the floor for any client.

Headless, the key reaches the app at once. In a real terminal without the kitty keyboard
protocol a lone Esc byte is held for ``ESCDELAY`` ms (picode sets 25) before Textual can
tell it from an escape sequence; terminals with the protocol send an unambiguous sequence.

    python bench/esc_latency.py [--runs 20] [--interval 0.01]

Targets: closed ≤ 20 ms median, idle ≤ 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx
from tests.wire.anthropic_protocol import AnthropicStream
from tests.wire.server import Pause, RecordedRequest, Stall, WireResponse, WireServer

from _stats import Summary, fmt, iqr, machine, verdict
from picode.agent.events import AgentEnd
from picode.ai.models import Model, builtin_registry
from picode.session.config.settings import Settings
from picode.session.options import SessionOptions
from picode.session.paths import resolve_paths
from picode.tools import coding_tools
from picode.tui.app import PicodeApp
from picode.tui.config import TuiConfig
from picode.tui.widgets.markdown import StreamingMarkdown
from picode.tui.widgets.notice import NoticeView

TIMEOUT_S = 10.0
#: Milestones after Esc, in the order they usually happen, with their SPEC target (seconds).
ROWS: dict[str, tuple[str, float | None]] = {
    "abort": ("Esc → `AgentSession.abort()` called", None),
    "closed": ("Esc → upstream connection closed (server saw it)", 0.020),
    "agent_end": ("Esc → `AgentEnd` emitted to listeners", None),
    "stopped": ("Esc → `session.is_running` False", None),
    "idle": ("Esc → UI idle (not running, marker painted)", 0.050),
}
#: Characters of the reply that must be on screen before Esc is pressed.
VISIBLE_CHARS = 60


def slow_reply(interval: float, deltas: int = 2_000) -> WireResponse:
    """A long text reply, one SSE event per chunk with a pause after each, then a stall."""
    stream = AnthropicStream(model="claude-bench")
    stream.text(*[f"word{n} " for n in range(deltas)], stop=False)
    body: list[Any] = []
    for chunk in stream.body():
        body.extend((chunk, Pause(interval)))
    body.append(Stall())
    return WireResponse(body=body)


async def wait_for(condition: Any, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        await asyncio.sleep(0.001)


async def painted(app: PicodeApp) -> float:
    """The time of the next refresh after now (what is mounted is then on screen)."""
    done = asyncio.Event()
    app.call_after_refresh(done.set)
    await asyncio.wait_for(done.wait(), TIMEOUT_S)
    return time.monotonic()


def interrupted_marker_shown(app: PicodeApp) -> bool:
    entries = app.transcript.entries
    if not entries:
        return False
    last = entries[-1]
    return isinstance(last, NoticeView) and last.text == "Interrupted" and last.is_mounted


async def one_esc(
    app: PicodeApp, pilot: Any, wire: WireServer, interval: float, rng: random.Random
) -> dict[str, float]:
    """Seconds from Esc to each milestone (see ``ROWS``), for one interrupted reply."""
    session = app.session
    assert session is not None
    seen = len(wire.requests)
    wire.enqueue(slow_reply(interval))
    app.editor.set_text("write a long answer")
    await pilot.press("enter")
    await wait_for(lambda: len(wire.requests) > seen, "the request")
    request: RecordedRequest = wire.requests[seen]
    await wait_for(lambda: list(app.query(StreamingMarkdown)), "the reply widget")
    markdown = list(app.query(StreamingMarkdown))[-1]
    await wait_for(lambda: len(markdown.source) >= VISIBLE_CHARS, "text on screen")
    # Land Esc at a random point of the server's pause cycle.
    await asyncio.sleep(rng.uniform(0, interval))

    aborted_at: list[float] = []
    original_abort = session.abort

    def timed_abort() -> None:
        aborted_at.append(time.monotonic())
        original_abort()

    agent_end: list[float] = []
    stopped: list[float] = []

    def on_event(event: Any) -> None:
        if isinstance(event, AgentEnd):
            agent_end.append(time.monotonic())

    def idle() -> bool:
        if not session.is_running and not stopped:
            stopped.append(time.monotonic())
        return bool(stopped) and interrupted_marker_shown(app)

    session.abort = timed_abort  # type: ignore[method-assign]
    unsubscribe = session.subscribe(on_event)
    try:
        pressed = time.monotonic()
        press = asyncio.create_task(pilot.press("escape"))
        await wait_for(idle, "the UI to go idle")
        shown = await painted(app)
        await press
        if not request.wait_closed(TIMEOUT_S) or request.closed_at is None:
            raise SystemExit("the upstream connection was never closed")
    finally:
        unsubscribe()
        del session.abort
    if not aborted_at or not agent_end:
        raise SystemExit("Esc did not call AgentSession.abort() or the run did not end")
    return {
        "entries": float(len(app.transcript.entries)),
        "abort": aborted_at[0] - pressed,
        "closed": request.closed_at - pressed,
        "agent_end": agent_end[0] - pressed,
        "stopped": stopped[0] - pressed,
        "idle": shown - pressed,
    }


async def bare_httpx_close(client: httpx.AsyncClient, wire: WireServer, interval: float) -> float:
    """Close called on a streaming httpx response → the server saw the socket close."""
    seen = len(wire.requests)
    wire.enqueue(slow_reply(interval))
    received = 0
    async with client.stream("POST", f"{wire.url}/v1/messages", json={"stream": True}) as reply:
        async for chunk in reply.aiter_bytes():
            received += len(chunk)
            if received > 4_000:
                break
        closing = time.monotonic()
    request = wire.requests[seen]
    if not request.wait_closed(TIMEOUT_S) or request.closed_at is None:
        raise SystemExit("httpx never closed the connection")
    return request.closed_at - closing


async def measure(runs: int, interval: float, root: Path) -> dict[str, list[float]]:
    results: dict[str, list[float]] = {key: [] for key in (*ROWS, "entries", "baseline")}
    rng = random.Random(5)
    with WireServer() as wire:
        os.environ["ANTHROPIC_BASE_URL"] = wire.url
        os.environ["ANTHROPIC_API_KEY"] = "bench"
        model = Model(
            id="claude-bench", name="Bench", api="anthropic-messages", provider="anthropic"
        )
        cwd = root / "project"
        cwd.mkdir()
        options = SessionOptions(
            tools=coding_tools(cwd),
            cwd=cwd,
            paths=resolve_paths({"PICODE_HOME": str(root / "home")}),
            settings=Settings(),
            registry=builtin_registry(),
            model=model,
            load_extensions=False,
        )
        config = TuiConfig.from_options(options)
        config.branch = ""
        app = PicodeApp(config)
        async with httpx.AsyncClient() as client, app.run_test(size=(120, 40)) as pilot:
            await wait_for(lambda: app.session is not None, "the session")
            # Warm-up: SDK import, client creation, first connection, first Markdown.
            await one_esc(app, pilot, wire, interval, rng)
            await bare_httpx_close(client, wire, interval)
            for _ in range(runs):
                for key, seconds in (await one_esc(app, pilot, wire, interval, rng)).items():
                    results[key].append(seconds)
                results["baseline"].append(await bare_httpx_close(client, wire, interval))
            session = app.session
            assert session is not None
            await session.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--interval", type=float, default=0.01, help="server pause per event")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="picode-bench-") as folder:
        results = asyncio.run(measure(args.runs, args.interval, Path(folder)))

    baseline = Summary.of(results["baseline"])
    print(machine())
    print(
        f"\n### Esc latency, real TUI + anthropic-messages over 127.0.0.1 "
        f"({args.runs} runs, server pause {args.interval * 1000:.0f} ms per event)\n"
    )
    print("| measure | median (min–max) | IQR | × baseline | target | |")
    print("|---|---:|---:|---:|---|---|")
    print(
        f"| bare httpx: close → server saw it (baseline) | {fmt(baseline, digits=2)} "
        f"| {iqr(baseline, digits=2)} ms | 1.0 | | |"
    )
    for key, (label, target) in ROWS.items():
        summary = Summary.of(results[key])
        goal = outcome = ""
        if target is not None:
            over = sum(value > target for value in results[key])
            goal = f"≤ {target * 1000:.0f} ms"
            outcome = f"median {verdict(summary.median <= target)}; {over}/{summary.runs} runs over"
        print(
            f"| {label} | {fmt(summary)} | {iqr(summary)} ms "
            f"| {summary.ratio(baseline):.0f} | {goal} | {outcome} |"
        )
    # The transcript grows by a few entries per run; the UI's share grows with it.
    print("\n| runs | transcript entries | Esc → closed, median | Esc → UI idle, median |")
    print("|---|---:|---:|---:|")
    third = max(1, args.runs // 3)
    for start in range(0, args.runs, third):
        part = slice(start, start + third)
        entries = results["entries"][part]
        if not entries:
            continue
        closed = Summary.of(results["closed"][part])
        idle = Summary.of(results["idle"][part])
        print(
            f"| {start + 1}–{start + len(entries)} | {min(entries):.0f}–{max(entries):.0f} "
            f"| {closed.median * 1000:.1f} ms | {idle.median * 1000:.1f} ms |"
        )


if __name__ == "__main__":
    main()
