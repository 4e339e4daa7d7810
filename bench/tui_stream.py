"""Streaming a markdown reply through the real app: 8 kB in ~700 deltas and 80 kB in ~7,000
(SPEC §8: 8 kB ≤ 0.35 s over the send time).

Measures, in a headless app (120×40) on a real AgentSession:
  send  = the time the "server" needs to send the whole reply: its schedule, first delta to
          last (the baseline). Also shown: when the provider, which shares the event loop
          with the app, actually pushed the last delta; a busy loop makes that later.
  shown = Enter → the last line of the reply is in the transcript and painted,
and reports shown − send per size (median, min–max), the share of that time the process
was on a CPU (near 100 %: the event loop is saturated, the UI cannot keep up) and the ratio
of the lag between the two sizes: ~1 means the UI keeps up whatever the length, ~10 means
the lag grows linearly with the reply, more than 10 means it grows faster than the reply.

The provider keeps a wall-clock schedule like a server writing into a socket: when the app
keeps the event loop busy, deltas that fell due meanwhile are delivered together at the
next wake-up instead of the whole schedule sliding. So a slow UI shows as lag, not as a
slower server.

    python bench/tui_stream.py [--runs 5] [--interval 0.002] [--sizes 8192:700,81920:7000]
                               [--warmups 1]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.tui.markdown_samples import sections

from _stats import Summary, fmt, machine, verdict
from picode.ai.builder import MessageBuilder
from picode.ai.models import builtin_registry
from picode.ai.providers.faux import FauxProvider
from picode.ai.stream import register_api
from picode.session.config.settings import Settings
from picode.session.options import SessionOptions
from picode.session.paths import resolve_paths
from picode.tools import coding_tools
from picode.tui.app import PicodeApp
from picode.tui.config import TuiConfig
from picode.tui.widgets.markdown import StreamingMarkdown


def reply(size: int = 8192) -> str:
    return sections(size)[:size].rstrip() + "\n\nThe end.\n"


async def one_run(
    root: Path, text: str, deltas: int, interval: float
) -> tuple[float, float, float, float]:
    """(the server's send time by its schedule, first → last delta as the provider pushed
    them, Enter → last line painted, CPU seconds the process used meanwhile)."""
    chunk = max(1, len(text) // deltas)
    pieces = [text[i : i + chunk] for i in range(0, len(text), chunk)]
    faux = FauxProvider()
    sent: dict[str, float] = {}

    async def scheduled(model: Any, context: Any, options: Any, out: MessageBuilder) -> None:
        start = sent["start"] = time.perf_counter()
        out.start()
        index = out.text_start()
        done = 0
        while done < len(pieces):
            due = min(len(pieces), int((time.perf_counter() - start) / interval) + 1)
            for piece in pieces[done:due]:
                out.text_delta(index, piece)
            done = due
            await asyncio.sleep(max(0.0, start + done * interval - time.perf_counter()))
        out.text_end(index)
        out.finish("stop")
        sent["end"] = time.perf_counter()

    register_api(faux.api, scheduled)
    options = SessionOptions(
        tools=coding_tools(root),
        cwd=root,
        paths=resolve_paths({"PICODE_HOME": str(root / "home")}),
        settings=Settings(),
        registry=builtin_registry(),
        model=faux.model,
        load_extensions=False,
        session=None,
    )
    config = TuiConfig.from_options(options)
    config.warm_provider = False
    app = PicodeApp(config)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            while app.session is None:
                await pilot.pause(0.01)
            app.editor.set_text("write the document")
            painted = asyncio.Event()
            started = time.perf_counter()
            cpu_started = time.process_time()
            app.simulate_key("enter")

            # Look the widget up once: querying the DOM every millisecond would itself load
            # the loop being measured.
            while not (blocks := list(app.query(StreamingMarkdown))):
                await asyncio.sleep(0.005)
            markdown = blocks[-1]
            while markdown.source != text:
                await asyncio.sleep(0.001)
            app.call_after_refresh(painted.set)
            await painted.wait()
            shown = time.perf_counter() - started
            cpu = time.process_time() - cpu_started
    finally:
        faux.close()
    return (len(pieces) - 1) * interval, sent["end"] - sent["start"], shown, cpu


def parse_sizes(spec: str) -> list[tuple[int, int]]:
    sizes = []
    for item in spec.split(","):
        size, _, deltas = item.partition(":")
        sizes.append((int(size), int(deltas or int(size) // 12)))
    return sizes


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--interval", type=float, default=0.002, help="seconds between deltas")
    parser.add_argument(
        "--sizes", default="8192:700,81920:7000", help="bytes:deltas pairs, comma separated"
    )
    parser.add_argument("--warmups", type=int, default=1, help="small replies run first")
    args = parser.parse_args()
    sizes = parse_sizes(args.sizes)
    results: dict[int, list[tuple[float, float, float, float]]] = {size: [] for size, _ in sizes}
    # The first reply in a process pays for importing Markdown, the agent and the session
    # (once per picode run); the warm-up keeps that out of the streaming figures.
    for _ in range(args.warmups):
        with tempfile.TemporaryDirectory() as folder:
            await one_run(Path(folder), reply(2048), 100, args.interval)
    for run in range(args.runs):
        # Alternate the order so drift on a shared machine hits both sizes alike.
        for size, deltas in sizes if run % 2 == 0 else sizes[::-1]:
            with tempfile.TemporaryDirectory() as folder:
                sample = await one_run(Path(folder), reply(size), deltas, args.interval)
                results[size].append(sample)

    print(machine())
    print(
        f"\n### Enter → last line painted, real TUI 120×40, {args.interval * 1000:.0f} ms "
        f"between deltas, {args.runs} runs per size after {args.warmups} warm-up\n"
    )
    print(
        "| reply | server send time (baseline) | provider pushed last delta | Enter → painted "
        "| lag over send time | × send | CPU busy | target |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    lags: dict[int, Summary] = {}
    for size, deltas in sizes:
        schedule = Summary.of([sample[0] for sample in results[size]])
        pushed = Summary.of([sample[1] for sample in results[size]])
        shown = Summary.of([sample[2] for sample in results[size]])
        lag = lags[size] = Summary.of([sample[2] - sample[0] for sample in results[size]])
        busy = Summary.of([sample[3] / sample[2] for sample in results[size]])
        goal = ""
        if size <= 8192:
            goal = f"≤ 350 ms: {verdict(lag.median <= 0.350)}"
        print(
            f"| {len(reply(size)):,} chars, ~{deltas:,} deltas | {schedule.median * 1000:.0f} ms "
            f"| {fmt(pushed, digits=0)} | {fmt(shown, digits=0)} | {fmt(lag, digits=0)} "
            f"| {shown.ratio(schedule):.2f} | {busy.median:.0%} | {goal} |"
        )
    if len(sizes) >= 2:
        (small, _), (large, _) = sizes[0], sizes[-1]
        ratio = lags[large].median / lags[small].median if lags[small].median > 0 else 0.0
        scale = large / small
        shape = (
            "about constant: the UI keeps up"
            if ratio < scale / 3
            else "about linear in the reply size"
            if ratio <= scale * 1.5
            else "faster than linear"
        )
        print(
            f"\nlag {large // 1000} kB / lag {small // 1000} kB = {ratio:.1f} "
            f"(sizes differ {scale:.0f}×): {shape}"
        )


if __name__ == "__main__":
    asyncio.run(main())
