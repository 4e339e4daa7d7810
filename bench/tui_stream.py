"""Streaming an 8 kB markdown reply in ~700 deltas through the real app (SPEC §8).

Measures, in a headless app on a real AgentSession:
  send  = the time the "server" needs to send the whole reply (first delta to last),
  shown = Enter → the last line of the reply is in the transcript and painted,
and reports shown − send (the target is ≤ 0.35 s). Median of several runs.

The provider keeps a wall-clock schedule like a server writing into a socket: when the app
keeps the event loop busy, deltas that fell due meanwhile are delivered together at the
next wake-up instead of the whole schedule sliding. So a slow UI shows as lag, not as a
slower server.

    python bench/tui_stream.py [--runs 5] [--deltas 700] [--interval 0.002]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from picode.ai.builder import MessageBuilder
from picode.ai.models import builtin_registry
from picode.ai.providers.faux import FauxProvider
from picode.ai.stream import register_api
from picode.session.config import Settings
from picode.session.options import SessionOptions
from picode.session.paths import resolve_paths
from picode.tui.app import PicodeApp
from picode.tui.config import TuiConfig
from picode.tui.widgets.markdown import StreamingMarkdown

SECTION = """## Section {n}

Some prose with **bold**, `inline code` and a [link](https://example.com/{n}).

- first point about item {n}
- second point, a little longer than the first one

```python
def handler_{n}(event: dict) -> int:
    return len(event.get("items", []))
```

"""


def reply(size: int = 8192) -> str:
    parts: list[str] = []
    n = 0
    while sum(map(len, parts)) < size:
        parts.append(SECTION.format(n=n))
        n += 1
    return "".join(parts)[:size].rstrip() + "\n\nThe end.\n"


async def one_run(root: Path, text: str, deltas: int, interval: float) -> tuple[float, float]:
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
    finally:
        faux.close()
    return sent["end"] - sent["start"], shown


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--deltas", type=int, default=700)
    parser.add_argument("--interval", type=float, default=0.002, help="seconds between deltas")
    args = parser.parse_args()
    text = reply()
    results = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as folder:
            results.append(await one_run(Path(folder), text, args.deltas, args.interval))
    sends = [send for send, _ in results]
    overheads = [shown - send for send, shown in results]
    print(f"reply: {len(text)} chars in ~{args.deltas} deltas, {args.runs} runs")
    print(f"  provider send time (median)      {statistics.median(sends) * 1000:7.1f} ms")
    print(f"  Enter → last line painted − send {statistics.median(overheads) * 1000:7.1f} ms")
    print("target: ≤ 350 ms over the send time")


if __name__ == "__main__":
    asyncio.run(main())
