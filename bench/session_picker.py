"""Session picker benchmark: open ``/resume`` over 1,000 sessions until their rows are drawn.

Run: ``python bench/session_picker.py [--sessions 1000] [--runs 9]``.
Everything happens in a temporary folder with a headless Textual app (120×40); prints a
markdown table of medians with min–max. Timed from ``push_screen`` to the list's first
``render`` (the picker is on screen) and to its first ``render`` with rows in it
(``store.list`` in a thread, filtering and layout included); the picker waits up to 0.1 s
for the listing before its first frame, so with a warm index both are the same frame.
Baselines measured in the same run and app:
- ``store.list(cwd)`` alone, with its index warm (the usual case);
- opening a modal screen holding one ``Static`` until it renders (Textual's own floor for
  showing any screen).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from _stats import Summary, fmt, machine
from picode.ai.types import AssistantMessage, TextContent, UserMessage
from picode.session.store.sessions import SessionStore
from picode.tui.pickers import PickList, SessionPicker

WORDS = (
    "fix",
    "the",
    "flaky",
    "test",
    "in",
    "the",
    "store",
    "index",
    "resume",
    "a",
    "large",
    "session",
    "faster",
    "add",
    "a",
    "light",
    "theme",
    "export",
    "to",
    "html",
    "with",
    "inline",
    "css",
    "refactor",
    "the",
    "provider",
    "retry",
    "loop",
    "why",
    "does",
    "compaction",
    "drop",
    "the",
    "last",
    "tool",
    "result",
    "parser",
    "crashes",
    "on",
    "torn",
    "lines",
)


def make_sessions(store: SessionStore, cwd: Path, count: int, rng: random.Random) -> None:
    for index in range(count):
        session = store.create(cwd)
        for _ in range(rng.randint(1, 6)):
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 40)))
            session.append_message(UserMessage(words))
            session.append_message(
                AssistantMessage([TextContent(words * rng.randint(1, 20))], "faux", "faux", "m")
            )
        if index % 7 == 0:
            session.append_session_info(f"session {index}")
        session.close()


class Probe(Static):
    """Notes when it is first rendered."""

    rendered_at: float | None = None

    def render(self) -> Any:
        if self.rendered_at is None:
            self.rendered_at = time.perf_counter()
        return super().render()


class EmptyModal(ModalScreen[None]):
    def __init__(self) -> None:
        super().__init__()
        self.probe = Probe("nothing here")

    def compose(self) -> ComposeResult:
        yield self.probe


shown_at: list[float] = []
rows_drawn_at: list[float] = []
_original_render = PickList.render


def _timed_render(self: PickList) -> Content:
    now = time.perf_counter()
    if not shown_at:
        shown_at.append(now)
    if self.count and not rows_drawn_at:
        rows_drawn_at.append(now)
    return _original_render(self)


async def wait_for(condition: Callable[[], object], pilot: Any, timeout: float = 10) -> None:
    deadline = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("the screen never rendered")
        await pilot.pause(0.001)


async def measure(store: SessionStore, cwd: Path, runs: int) -> dict[str, list[float]]:
    PickList.render = _timed_render  # type: ignore[method-assign]
    app: App[None] = App()
    results: dict[str, list[float]] = {"picker": [], "shown": [], "empty": [], "list": []}
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(runs):
            gc.collect()
            started = time.perf_counter()
            store.list(cwd)
            results["list"].append(time.perf_counter() - started)

            modal = EmptyModal()
            gc.collect()
            started = time.perf_counter()
            app.push_screen(modal)
            await wait_for(lambda modal=modal: modal.probe.rendered_at is not None, pilot)
            assert modal.probe.rendered_at is not None
            results["empty"].append(modal.probe.rendered_at - started)
            app.pop_screen()
            await pilot.pause()

            picker = SessionPicker(store, cwd)
            shown_at.clear()
            rows_drawn_at.clear()
            gc.collect()
            started = time.perf_counter()
            app.push_screen(picker)
            await wait_for(lambda: rows_drawn_at, pilot)
            results["shown"].append(shown_at[0] - started)
            results["picker"].append(rows_drawn_at[0] - started)
            assert picker.pick_list.count > 0
            app.pop_screen()
            await pilot.pause()
    PickList.render = _original_render  # type: ignore[method-assign]
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="picode-bench-") as tmp:
        root = Path(tmp)
        store = SessionStore(root / "sessions")
        cwd = root / "project"
        print(f"generating {args.sessions} sessions ...", file=sys.stderr)
        make_sessions(store, cwd, args.sessions, random.Random(3))
        started = time.perf_counter()
        listed = store.list(cwd)
        cold = time.perf_counter() - started
        assert len(listed) == args.sessions
        results = asyncio.run(measure(store, cwd, args.runs))

    empty = Summary.of(results["empty"])
    print(machine())
    print(f"\n### Open the session picker over {args.sessions:,} sessions ({args.runs} runs)\n")
    print("| step | median (min–max) | × empty modal |")
    print("|---|---:|---:|")
    print(f"| `store.list(cwd)`, first time (no index yet; once) | {cold * 1000:.1f} ms | |")
    print(f"| `store.list(cwd)`, index warm | {fmt(Summary.of(results['list']))} | |")
    print(f"| empty modal screen until rendered (baseline) | {fmt(empty)} | 1.00 |")
    for label, key in (
        ("SessionPicker on screen (list still loading)", "shown"),
        ("SessionPicker until its rows are rendered", "picker"),
    ):
        summary = Summary.of(results[key])
        print(f"| {label} | {fmt(summary)} | {summary.ratio(empty):.2f} |")


if __name__ == "__main__":
    main()
