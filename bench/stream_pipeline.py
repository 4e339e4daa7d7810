"""Cost of the ai-layer streaming pipeline: the event stream per delta, and streamed tool
arguments as they grow.

1. Deltas through ``AssistantMessageEventStream``: a producer task pushes ``--deltas`` text
   deltas (building one event object each, as a provider does) and yields to the loop every
   100 pushes; a consumer task iterates. Baseline, in the same run: the same events through
   a bare ``asyncio.Queue`` (``put_nowait`` / ``await get()``), which does no merging at all.
   Reported: CPU µs per delta (median, min–max of ``--runs``) and the ratio to the baseline.
2. A ``write``-style tool call whose 50 kB and 200 kB argument arrives in 16-byte deltas,
   through ``FauxProvider`` and ``stream_simple`` with a consumer that reads the partial
   arguments on every tool-call delta it receives. ``burst``: the provider pushes without
   pausing; ``paced``: it yields to the loop after every delta, so the consumer sees a
   50 ms flush (and a parse) whenever one is due. Also ``StreamingJson`` alone with a
   snapshot every 50 deltas (the worst case: parse demand grows with the text). Reported:
   total CPU (``time.process_time``) per size and the ratio 200 kB / 50 kB, ~4 when linear.
3. What the display's sanitiser (``picode.ai.untrusted.safe``) adds: per text delta if it
   ran on every one, per flush (the TUI runs it once on the fragments a flush joins, at
   most 30 a second), clean and hostile (an OSC 52, a title change, a screen clear); and
   ``visible`` on a 300-line command (the approval prompt). Reported: CPU µs per call,
   and per delta as a share of the event stream's own cost per delta (part 1).

Times are CPU time, not wall time: the machine may be shared and sleeping does not count.

Usage: python bench/stream_pipeline.py [--deltas 100000] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import time
from collections.abc import Callable

from _stats import machine
from picode.ai.event_stream import AssistantMessageEventStream
from picode.ai.events import DoneEvent, StartEvent, TextDeltaEvent, ToolCallDeltaEvent
from picode.ai.partial_json import StreamingJson
from picode.ai.providers.faux import FauxProvider, FauxToolCall, FauxTurn
from picode.ai.stream import stream_simple
from picode.ai.types import AssistantMessage, Context, ToolCall, UserMessage
from picode.ai.untrusted import safe, visible

YIELD_EVERY = 100
DELTA_TEXT = "abcd"
ARG_CHUNK = 16
SIZES = (50_000, 200_000)


# --- 1. events per delta ------------------------------------------------------------------


def _partial() -> AssistantMessage:
    return AssistantMessage(content=[], api="bench", provider="bench", model="bench")


async def _through_stream(deltas: int, throttle: float) -> tuple[float, int]:
    stream = AssistantMessageEventStream(throttle=throttle)
    partial = _partial()

    async def produce() -> None:
        push = stream.push
        push(StartEvent(partial))
        for i in range(deltas):
            push(TextDeltaEvent(0, DELTA_TEXT, partial))
            if i % YIELD_EVERY == YIELD_EVERY - 1:
                await asyncio.sleep(0)
        push(DoneEvent("stop", partial))

    started = time.thread_time()
    producer = asyncio.create_task(produce())
    received = 0
    async for _event in stream:
        received += 1
    await producer
    return time.thread_time() - started, received


async def _through_queue(deltas: int) -> tuple[float, int]:
    queue: asyncio.Queue[object] = asyncio.Queue()
    partial = _partial()

    async def produce() -> None:
        put = queue.put_nowait
        put(StartEvent(partial))
        for i in range(deltas):
            put(TextDeltaEvent(0, DELTA_TEXT, partial))
            if i % YIELD_EVERY == YIELD_EVERY - 1:
                await asyncio.sleep(0)
        put(DoneEvent("stop", partial))

    started = time.thread_time()
    producer = asyncio.create_task(produce())
    received = 0
    while True:
        event = await queue.get()
        received += 1
        if isinstance(event, DoneEvent):
            break
    await producer
    return time.thread_time() - started, received


def bench_events(deltas: int, runs: int) -> list[tuple[str, list[float], float]]:
    """Per scenario: name, per-delta seconds of each run, events the consumer received."""
    scenarios: dict[str, Callable[[], tuple[float, int]]] = {
        "asyncio.Queue (baseline)": lambda: asyncio.run(_through_queue(deltas)),
        "event stream, 50 ms throttle": lambda: asyncio.run(_through_stream(deltas, 0.05)),
        "event stream, no throttle": lambda: asyncio.run(_through_stream(deltas, 0.0)),
    }
    for measure in scenarios.values():  # warm up
        measure()
    samples: dict[str, list[float]] = {name: [] for name in scenarios}
    received: dict[str, list[int]] = {name: [] for name in scenarios}
    order = list(scenarios)
    for run in range(runs):
        for name in order if run % 2 == 0 else order[::-1]:
            gc.collect()
            seconds, count = scenarios[name]()
            samples[name].append(seconds / deltas)
            received[name].append(count)
    return [(name, samples[name], statistics.median(received[name])) for name in scenarios]


# --- 2. streamed tool arguments -----------------------------------------------------------


def _argument(size: int) -> dict[str, str]:
    line = 'print("line")  # \\ é\n'
    content = (line * (size // len(line) + 1))[: size - 40]
    return {"path": "big.py", "content": content}


async def _stream_tool_call(provider: FauxProvider, arguments: dict[str, str]) -> float:
    """CPU seconds from the request to the final message (event loop start-up excluded)."""
    provider.add(FauxTurn([FauxToolCall("write", arguments, id="call_1")]))
    context = Context(messages=[UserMessage("write it")])
    seen = 0
    started = time.process_time()
    stream = stream_simple(provider.model, context)
    async for event in stream:
        if isinstance(event, ToolCallDeltaEvent):
            block = event.partial.content[event.content_index]
            assert isinstance(block, ToolCall)
            seen += len(block.arguments.get("content", ""))  # what a UI would read
    final = await stream.result()
    elapsed = time.process_time() - started
    if final.tool_calls[0].arguments != arguments:
        raise SystemExit("streamed arguments came out wrong")
    return elapsed


def _faux_cpu(size: int, paced: bool) -> float:
    # A delay this small only yields to the loop; it never really waits.
    provider = FauxProvider(chunk_size=ARG_CHUNK, delay=1e-9 if paced else 0.0)
    arguments = _argument(size)
    gc.collect()
    elapsed = asyncio.run(_stream_tool_call(provider, arguments))
    provider.close()
    return elapsed


def _snapshot_every_50_cpu(size: int) -> float:
    text = json.dumps(_argument(size))
    gc.collect()
    started = time.process_time()
    buffer = StreamingJson()
    for number, start in enumerate(range(0, len(text), ARG_CHUNK), 1):
        buffer.append(text[start : start + ARG_CHUNK])
        if number % 50 == 0:
            buffer.snapshot()
    buffer.final()
    return time.process_time() - started


def bench_arguments(runs: int) -> list[tuple[str, dict[int, list[float]]]]:
    scenarios: dict[str, Callable[[int], float]] = {
        "stream_simple + FauxProvider, burst": lambda size: _faux_cpu(size, paced=False),
        "stream_simple + FauxProvider, paced": lambda size: _faux_cpu(size, paced=True),
        "StreamingJson, snapshot every 50 deltas": _snapshot_every_50_cpu,
    }
    rows = []
    for name, measure in scenarios.items():
        measure(SIZES[0])  # warm up
        samples: dict[int, list[float]] = {size: [] for size in SIZES}
        for run in range(runs):
            for size in SIZES if run % 2 == 0 else SIZES[::-1]:
                samples[size].append(measure(size))
        rows.append((name, samples))
    return rows


# --- report -----------------------------------------------------------------------------


# --- 3. the display's sanitiser -------------------------------------------------------------

HOSTILE = "\x1b]52;c;aGVsbG8=\x07\x1b]0;pwned\x07\x1b[2J\x9b2J"
#: Deltas a 1/30 s flush joins when a fast model streams (about 2,000 deltas a second).
DELTAS_PER_FLUSH = 64


def _per_call(function: Callable[[str], str], text: str, calls: int) -> float:
    started = time.process_time()
    for _ in range(calls):
        function(text)
    return (time.process_time() - started) / calls


def bench_sanitiser(runs: int) -> list[tuple[str, list[float]]]:
    flush = DELTA_TEXT * DELTAS_PER_FLUSH
    command = "\n".join(f"echo line {i} && make target-{i}" for i in range(300))
    cases: list[tuple[str, Callable[[str], str], str, int]] = [
        ("safe, one clean delta", safe, DELTA_TEXT, 200_000),
        (f"safe, one clean flush ({len(flush)} chars)", safe, flush, 50_000),
        ("safe, one hostile delta", safe, HOSTILE, 50_000),
        ("safe, one hostile flush", safe, flush + HOSTILE, 20_000),
        ("visible, a 300-line command", visible, command, 500),
        ("visible, the same with escapes", visible, command + HOSTILE, 500),
    ]
    return [
        (name, [_per_call(function, text, calls) for _ in range(runs)])
        for name, function, text, calls in cases
    ]


def _spread(values: list[float], scale: float, digits: int) -> str:
    return f"{min(values) * scale:.{digits}f}–{max(values) * scale:.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    events = bench_events(args.deltas, args.runs)
    baseline = statistics.median(events[0][1])
    print(machine() + "\n")
    print(
        f"### Event stream: {args.deltas:,} text deltas, producer yields every {YIELD_EVERY}, "
        f"{args.runs} runs (CPU µs per delta)\n"
    )
    print("| path | median µs/delta | min–max | events received | ratio to Queue |")
    print("|---|---:|---:|---:|---:|")
    for name, per_delta, received in events:
        median = statistics.median(per_delta)
        print(
            f"| {name} | {median * 1e6:.3f} | {_spread(per_delta, 1e6, 3)} "
            f"| {received:,.0f} | {median / baseline:.2f} |"
        )

    arguments = bench_arguments(args.runs)
    small, large = SIZES
    print(
        f"\n### Streamed tool arguments: {ARG_CHUNK}-byte deltas, {args.runs} runs (total CPU ms)\n"
    )
    print(
        f"| path | {small // 1000} kB median | min–max | {large // 1000} kB median | min–max "
        f"| ratio {large // 1000}k/{small // 1000}k |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for name, samples in arguments:
        low = statistics.median(samples[small])
        high = statistics.median(samples[large])
        print(
            f"| {name} | {low * 1e3:.1f} | {_spread(samples[small], 1e3, 1)} "
            f"| {high * 1e3:.1f} | {_spread(samples[large], 1e3, 1)} | {high / low:.2f} |"
        )

    stream_cost = statistics.median(events[1][1])
    print(f"\n### The display's sanitiser, {args.runs} runs (CPU µs per call)\n")
    print(f"Share: per delta, against the event stream's {stream_cost * 1e6:.3f} µs per delta.\n")
    print("| call | median µs | min–max | share per delta |")
    print("|---|---:|---:|---:|")
    for name, samples in bench_sanitiser(args.runs):
        median = statistics.median(samples)
        per_delta = median / (DELTAS_PER_FLUSH if "flush" in name else 1)
        share = f"{per_delta / stream_cost:.1%}" if name.startswith("safe") else "—"
        print(f"| {name} | {median * 1e6:.3f} | {_spread(samples, 1e6, 3)} | {share} |")


if __name__ == "__main__":
    main()
