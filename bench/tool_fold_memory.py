"""What a tool call's block leaves behind once folded out of view (issue 33).

The real ``PicodeApp`` runs headless (120×40) on a real session with the scripted provider.
Each exchange is a prompt, one tool call with a long output, and a short answer; the tool
is ``read`` of a ~1,000-line Python file (``--tool read``), ``edit`` of one (a 60-line
diff in colour) or ``bash`` printing ~1,000 lines; ``--expand`` shows tool output expanded
(ctrl+o: up to 2,000 lines each). Older exchanges scroll out of view and are folded.

Traced memory (``tracemalloc``, 25 frames, after a full collection) is read after the
tenth exchange and after the last: the growth per exchange, and where it was allocated (by
file). Then every folded entry is shown again and scrolled into view, and the traced
memory read once more: what drawing them all takes, that folding gave back.

    python bench/tool_fold_memory.py [--exchanges 30] [--tool read|edit|bash] [--expand]

The same exchanges also carry what the session keeps (the tool result as a message, the
file on disk is not counted): run it on two builds (``PYTHONPATH=OTHER/src``) to compare.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import tempfile
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.tui.conftest import TuiHarness, send, wait_until

from _stats import machine
from picode.ai.providers.faux import FauxToolCall, FauxTurn, text_turn

SIZE = (120, 40)
START_AT = 10


def source(number: int) -> str:
    return "".join(
        f"def step_{number}_{k}(value: int) -> int:  # line {k}\n    return value + {k}\n"
        for k in range(500)
    )


def call(tool: str, number: int) -> FauxToolCall:
    path = f"module_{number}.py"
    if tool == "edit":
        edits = [
            {"old_text": f"return value + {k}\n", "new_text": f"return value - {k}\n"}
            for k in range(1, 30)
        ]
        return FauxToolCall("edit", {"path": path, "edits": edits})
    if tool == "bash":
        return FauxToolCall("bash", {"command": f"cat {path} {path}"})
    return FauxToolCall("read", {"path": path})


def turns(tool: str, exchanges: int) -> Iterator[Any]:
    for number in range(exchanges):
        yield FauxTurn([call(tool, number)])
        yield text_turn(f"Done with module {number}.")


def traced() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


async def measure(args: argparse.Namespace) -> None:
    tui = TuiHarness(Path(tempfile.mkdtemp()))
    for number in range(args.exchanges):
        (tui.cwd / f"module_{number}.py").write_text(source(number), encoding="utf-8")
    # A context no compaction interrupts: only the exchanges are measured.
    app = tui.app(tui.faux(*turns(args.tool, args.exchanges), context_window=10**9))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session is not None, what="the session")
        if args.expand:
            await pilot.press("ctrl+o")
        before = snapshot = None
        for number in range(args.exchanges):
            count = len(app.session.messages)
            await send(pilot, f"edit module {number}")
            await wait_until(
                pilot,
                lambda c=count: len(app.session.messages) >= c + 4 and not app.session.is_running,
                what=f"exchange {number}",
                timeout=60,
            )
            await pilot.pause()
            if number == START_AT - 1:
                tracemalloc.start(25)
                before, snapshot = traced(), tracemalloc.take_snapshot()
        await pilot.pause(0.2)
        after = traced()
        assert before is not None
        assert snapshot is not None
        grown = tracemalloc.take_snapshot().compare_to(snapshot, "filename")
        transcript = app.transcript
        folded = transcript.folded
        transcript.unfold_all()
        for entry in list(transcript.entries):
            transcript.scroll_to_widget(entry, animate=False, top=True)
            await pilot.pause()
        drawn = traced()
    per = (after - before) / (args.exchanges - START_AT)
    kind = f"{'expanded' if args.expand else 'collapsed'} {args.tool}"
    print(machine())
    print(f"\n{args.exchanges} exchanges, each one {kind} call ({SIZE[0]}×{SIZE[1]})\n")
    print(f"- traced memory per exchange, {START_AT + 1}–{args.exchanges}: {per / 1024:.1f} kB")
    print(f"- entries folded at the end: {folded}")
    print(
        f"- every folded entry shown and drawn again: +{(drawn - after) / 1024:.0f} kB "
        f"({(drawn - after) / max(1, folded) / 1024:.1f} kB an entry)"
    )
    print("\ngrowth by file, exchanges 11 to the last:\n")
    for stat in grown[:8]:
        print(f"    {stat.size_diff / 1024:8.1f} kB  {stat.traceback[0].filename}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exchanges", type=int, default=30)
    parser.add_argument("--tool", choices=("read", "edit", "bash"), default="read")
    parser.add_argument("--expand", action="store_true", help="tool output expanded (ctrl+o)")
    args = parser.parse_args()
    asyncio.run(measure(args))


if __name__ == "__main__":
    main()
