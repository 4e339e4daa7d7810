"""Memory and load time of the TUI on a resumed session (SPEC §8: 10,000 messages < 300 MB RSS;
a 128 MB session resumed interactively < 1 s).

A session is generated with the store API in a temporary ``PICODE_HOME`` (user prompts,
assistant steps with thinking, text and tool calls, tool results of a few kB: the shape of
real sessions). Each sample is a fresh interpreter that opens the real ``PicodeApp``
headless (120×40) and waits until the transcript's last entry is mounted and painted, then
reads its own ``VmRSS`` and ``VmHWM`` (peak) from ``/proc/self/status``. Four kinds of
sample run interleaved:

- bare: a bare Textual ``App`` with one ``Static``, same size, first frame painted
  (the baseline: what Textual itself costs);
- new: picode on a new, empty session (picode's fixed cost);
- session: ``AgentSession.open`` on the generated session plus the tail the TUI asks for,
  no Textual at all (what holding the session costs, apart from any widget);
- resumed: picode resuming the generated session.

Times are wall clock from the ``App`` (or the session) being constructed, imports done, to
the painted frame (or the opened session).

    python bench/tui_memory.py [--messages 10000] [--runs 3]
    python bench/tui_memory.py --size-mb 128 [--runs 3]     # interactive resume of a big file

``--size-mb`` generates by size instead, compacting along the way as a long-running agent
does (the model context stays bounded; the file keeps every message).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from picode.session.store import SessionStore

# The children import only what they measure: the parent's helpers load inside main().
from _tui import bench_options, painted, sample_child, wait_for

SIZE = (120, 40)


# --- child: one measurement in a fresh interpreter ------------------------------------------


def _memory() -> dict[str, float]:
    """VmRSS and VmHWM in MiB (Linux); ru_maxrss elsewhere."""
    values: dict[str, float] = {}
    try:
        for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0]) / 1024
    except OSError:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        values = {"VmRSS": peak, "VmHWM": peak}
    return values


async def _bare() -> dict[str, Any]:
    from textual.app import App, ComposeResult
    from textual.widgets import Static

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield Static("hello")

    started = time.perf_counter()
    app = Bare()
    async with app.run_test(size=SIZE):
        await painted(app)
        elapsed = time.perf_counter() - started
        return {"seconds": elapsed, **_memory()}


async def _picode(home: Path, cwd: Path, session: Path | None) -> dict[str, Any]:
    from picode.tui.app import PicodeApp
    from picode.tui.config import TuiConfig

    options = bench_options(home, cwd, session)
    config = TuiConfig.from_options(options)
    config.warm_provider = False  # no request is made; keep the SDK out of the figure
    config.branch = ""
    started = time.perf_counter()
    app = PicodeApp(config)
    async with app.run_test(size=SIZE):
        await wait_for(lambda: app.session is not None, "the session")
        entries = app.transcript.entries
        if session is not None:
            await wait_for(lambda: len(entries) > 1, "the history")
        await wait_for(lambda: entries[-1].is_mounted, "the last entry to mount")
        await painted(app)
        elapsed = time.perf_counter() - started
        opened = app.session
        assert opened is not None
        result = {
            "seconds": elapsed,
            "entries": len(entries),
            "hidden": app.transcript.hidden,
            "context_messages": len(opened.messages),
            "display_messages": opened.display_count,
            **_memory(),
        }
        await opened.close()
        return result


async def _session_only(home: Path, cwd: Path, session: Path) -> dict[str, Any]:
    from picode.session.agent_session import AgentSession

    options = bench_options(home, cwd, session)
    started = time.perf_counter()
    opened = await AgentSession.open(options)
    count = opened.display_count  # what the TUI asks for: the newest 150
    tail = opened.display_range(max(0, count - 150), count)
    elapsed = time.perf_counter() - started
    result = {"seconds": elapsed, "tail": len(tail), **_memory()}
    await opened.close()
    return result


def child(kind: str, home: Path, cwd: Path, session: Path | None) -> None:
    if kind == "bare":
        result = asyncio.run(_bare())
    elif kind == "session":
        assert session is not None
        result = asyncio.run(_session_only(home, cwd, session))
    else:
        result = asyncio.run(_picode(home, cwd, session if kind == "resumed" else None))
    print(json.dumps(result))


# --- parent ---------------------------------------------------------------------------------


def generate(
    store: SessionStore, cwd: Path, messages: int, size_mb: int, compact_every: int
) -> Path:
    from session_store import TextSource, write_session

    source = TextSource(random.Random(11))
    if size_mb:
        return write_session(store, cwd, source, size_mb << 20, compact_every).path
    return write_session(store, cwd, source, 1 << 40, compact_every, max_messages=messages).path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--size-mb", type=int, default=0, help="generate by size instead")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--compact-every",
        type=int,
        default=None,
        help="compact when this many bytes piled up since the last compaction (0: never); "
        "default: never for --messages, 600000 for --size-mb",
    )
    parser.add_argument("--child", nargs=4, metavar=("KIND", "HOME", "CWD", "SESSION"))
    args = parser.parse_args()
    if args.child:
        kind, home, cwd, session = args.child
        child(kind, Path(home), Path(cwd), Path(session))
        return
    from _stats import Summary, fmt, machine, verdict
    from picode.session.store import SessionStore

    with tempfile.TemporaryDirectory(prefix="picode-bench-") as folder:
        home = Path(folder) / "home"
        cwd = Path(folder) / "project"
        cwd.mkdir()
        store = SessionStore(home / "data" / "sessions")
        what = f"{args.size_mb} MB" if args.size_mb else f"{args.messages:,} messages"
        print(f"generating a session of {what} ...", file=sys.stderr)
        compact_every = args.compact_every
        if compact_every is None:
            compact_every = 600_000 if args.size_mb else 0
        path = generate(store, cwd, args.messages, args.size_mb, compact_every)
        size = path.stat().st_size
        read_times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            path.read_bytes()
            read_times.append(time.perf_counter() - started)
        kinds = ("bare", "new", "session", "resumed")
        samples: dict[str, list[dict[str, Any]]] = {kind: [] for kind in kinds}
        sample_child(__file__, "resumed", home, cwd, path)  # warm the page cache and byte-code
        for run in range(args.runs):
            for kind in kinds if run % 2 == 0 else kinds[::-1]:
                samples[kind].append(sample_child(__file__, kind, home, cwd, path))

    resumed = samples["resumed"][-1]
    print(machine())
    print(
        f"\n### TUI on a resumed session: {size / 2**20:.1f} MiB file, "
        f"{resumed['display_messages']:,} messages on the branch, "
        f"{resumed['context_messages']:,} in the model context, {resumed['entries']} entries "
        f"mounted ({resumed['hidden']:,} hidden); {args.runs} runs, fresh process each\n"
    )
    print("| app | RSS after tail painted | peak RSS (VmHWM) | × bare RSS | start → painted |")
    print("|---|---:|---:|---:|---:|")
    base_rss = Summary.of([s["VmRSS"] for s in samples["bare"]])
    labels = {
        "bare": "bare Textual app (baseline)",
        "new": "picode, new session",
        "session": "`AgentSession.open` alone, no TUI (same session)",
        "resumed": "picode, resumed session",
    }
    summaries: dict[str, tuple[Summary, Summary, Summary]] = {}
    for kind in kinds:
        rss = Summary.of([s["VmRSS"] for s in samples[kind]])
        peak = Summary.of([s["VmHWM"] for s in samples[kind]])
        seconds = Summary.of([s["seconds"] for s in samples[kind]])
        summaries[kind] = (rss, peak, seconds)
        print(
            f"| {labels[kind]} | {fmt(rss, 1, 'MiB', 0)} | {fmt(peak, 1, 'MiB', 0)} "
            f"| {rss.ratio(base_rss):.2f} | {fmt(seconds, digits=0)} |"
        )
    read = Summary.of(read_times)
    rss, peak, seconds = summaries["resumed"]
    extra = seconds.median - summaries["new"][2].median
    print(f"\nreading the file's bytes once: {fmt(read)}")
    print(
        f"resume cost over a new session (start → painted): {extra * 1000:.0f} ms "
        f"({extra / read.median:.1f}× reading the file)"
    )
    if args.size_mb:
        print(f"target: resumed start → painted < 1 s: {verdict(seconds.median < 1.0)}")
    worst = peak.high * 2**20
    print(
        f"target: RSS < 300 MB: {verdict(worst < 300e6)} "
        f"(worst peak {worst / 1e6:.0f} MB = {peak.high:.0f} MiB)"
    )


if __name__ == "__main__":
    main()
