"""Resuming a long session in the TUI: time from the app's start to its last message painted.

A session of ``--messages`` messages (default 10,000: user prompts, assistant steps with
thinking, text and tool calls, tool results of a few kB) is generated with the store API in
a temporary ``PICODE_HOME``. Each sample is a fresh interpreter (imports done before the
clock starts) running the real ``PicodeApp`` headless at 120×40. Kinds, interleaved:

- session: ``AgentSession.open`` plus the tail the TUI renders, no Textual at all (the
  floor: reading the file and building the model context is the session's cost);
- bare: a bare Textual ``App`` with one ``Static`` to its first painted frame (Textual's own
  floor);
- resume: picode resuming the session: from ``PicodeApp(config)`` to the last message
  mounted and painted (the tail is rendered first, older messages wait);
- resume-150: the same with the tail size set to 150 messages (what the TUI rendered on
  resume before older messages were loaded lazily);
- page: after the resume, scrolling to the top: from the scroll to the previous page of
  messages mounted and painted (what each step up costs).

    python bench/tui_resume.py [--messages 10000] [--runs 5]

Prints medians (min–max) and each kind's ratio to the session floor.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _tui import bench_options, painted, sample_child, wait_for

SIZE = (120, 40)
KINDS = ("session", "bare", "resume", "resume-150", "page")


# --- child: one measurement in a fresh interpreter ------------------------------------------


async def _session_only(home: Path, cwd: Path, session: Path) -> dict[str, Any]:
    from picode.session.agent_session import AgentSession
    from picode.tui.controllers.history import TAIL_SIZE

    options = bench_options(home, cwd, session)
    started = time.perf_counter()
    opened = await AgentSession.open(options)
    count = opened.display_count  # what the TUI asks for
    opened.display_range(max(0, count - TAIL_SIZE), count)
    elapsed = time.perf_counter() - started
    await opened.close()
    return {"seconds": elapsed}


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
        return {"seconds": time.perf_counter() - started}


async def _resume(home: Path, cwd: Path, session: Path, kind: str) -> dict[str, Any]:
    from picode.tui.app import PicodeApp
    from picode.tui.config import TuiConfig

    config = TuiConfig.from_options(bench_options(home, cwd, session))
    config.warm_provider = False  # no request is made; keep the SDK out of the figure
    config.branch = ""
    started = time.perf_counter()
    app = PicodeApp(config)
    if kind == "resume-150":
        app.history.tail_size = 150
    async with app.run_test(size=SIZE):
        await wait_for(lambda: app.session is not None, "the session")
        transcript = app.transcript
        entries = transcript.entries
        await wait_for(lambda: len(entries) > 1 and entries[-1].is_mounted, "the last message")
        await painted(app)
        elapsed = time.perf_counter() - started
        result: dict[str, Any] = {
            "seconds": elapsed,
            "entries": len(entries),
            "older": transcript.older,
        }
        if kind == "page":
            # The screens above the last are folded (mounted, not laid out): the first
            # scroll to the top shows them again; the next loads the page before them.
            await _unfolded(app, transcript)
            older = transcript.older
            started = time.perf_counter()
            transcript.scroll_home(animate=False)
            await wait_for(lambda: transcript.older < older, "the previous page")
            first = entries[0]
            await wait_for(lambda: first.is_mounted, "the page to mount")
            await painted(app)
            result = {"seconds": time.perf_counter() - started, "loaded": older - transcript.older}
        opened = app.session
        assert opened is not None
        await opened.close()
        return result


async def _unfolded(app: Any, transcript: Any) -> None:
    if transcript.folded:
        transcript.scroll_home(animate=False)
        await wait_for(lambda: not transcript.folded, "the folded entries")
        await painted(app)


def child(kind: str, home: Path, cwd: Path, session: Path) -> None:
    if kind == "session":
        result = asyncio.run(_session_only(home, cwd, session))
    elif kind == "bare":
        result = asyncio.run(_bare())
    else:
        result = asyncio.run(_resume(home, cwd, session, kind))
    print(json.dumps(result))


# --- parent ---------------------------------------------------------------------------------


def generate(home: Path, cwd: Path, messages: int) -> Path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from picode.session.paths import resolve_paths
    from picode.session.store.sessions import SessionStore
    from session_store import TextSource, write_session

    store = SessionStore(resolve_paths({"PICODE_HOME": str(home)}).sessions_dir)
    source = TextSource(random.Random(11))
    return write_session(store, cwd, source, 1 << 40, 0, max_messages=messages).path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--child", nargs=4, metavar=("KIND", "HOME", "CWD", "SESSION"))
    args = parser.parse_args()
    if args.child:
        kind, home, cwd, session = args.child
        child(kind, Path(home), Path(cwd), Path(session))
        return
    with tempfile.TemporaryDirectory(prefix="picode-bench-") as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "project"
        cwd.mkdir()
        started = time.perf_counter()
        session = generate(home, cwd, args.messages)
        size_mb = session.stat().st_size / (1 << 20)
        print(
            f"session: {args.messages:,} messages, {size_mb:.1f} MiB "
            f"(generated in {time.perf_counter() - started:.1f} s)"
        )
        for kind in KINDS:  # warm the OS file cache and .pyc files
            sample_child(__file__, kind, home, cwd, session)
        times: dict[str, list[float]] = {kind: [] for kind in KINDS}
        extra: dict[str, dict[str, Any]] = {}
        for _ in range(args.runs):
            for kind in KINDS:
                result = sample_child(__file__, kind, home, cwd, session)
                times[kind].append(result.pop("seconds"))
                extra[kind] = result
    floor = statistics.median(times["session"])
    print(f"runs: {args.runs} each; median (min–max) wall time, fresh interpreter per sample")
    print("| kind | time | × session floor | notes |")
    print("| --- | --- | --- | --- |")
    for kind in KINDS:
        values = times[kind]
        median = statistics.median(values)
        notes = ", ".join(f"{k} {v:,}" for k, v in extra.get(kind, {}).items())
        print(
            f"| {kind} | {median * 1000:.0f} ms ({min(values) * 1000:.0f}–"
            f"{max(values) * 1000:.0f}) | {median / floor:.2f} | {notes} |"
        )


if __name__ == "__main__":
    main()
