"""Per-delta overhead of the agent loop and the session over the bare provider event stream.

Two scenarios, each timed (a) consuming the stream directly (the baseline), (b) through
``Agent`` with one no-op listener and (c) through ``AgentSession`` (agent loop, recovery
rules, persistence of the finished message, session events) with one no-op listener; the
differences are what the agent and session layers add per provider delta. Times are the
process's CPU time; every path runs ``--runs`` times, interleaved.

- ``throttled``: ``stream_simple`` with the scripted provider, no delay. The provider pushes
  every delta at once, so the 50 ms throttle merges them and the agent sees few updates.
- ``per-delta``: an unthrottled stream whose producer yields to the loop after every delta,
  so every delta becomes its own ``MessageUpdate`` (the worst case for the agent layer).

The SPEC §8 bar (≤ 10 µs per delta for provider → stream → agent loop → session listener)
is the sum of this script's session figure and ``provider_overhead.py``'s provider figure.

Usage: python bench/agent_loop.py [--deltas 20000] [--chunk 4] [--runs 9]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from _stats import Summary, fmt, machine
from picode.agent.agent import Agent
from picode.ai.builder import MessageBuilder
from picode.ai.event_stream import AssistantMessageEventStream
from picode.ai.models import Model, builtin_registry
from picode.ai.options import StreamOptions
from picode.ai.providers.faux import FauxProvider, FauxText, FauxTurn
from picode.ai.stream import stream_simple
from picode.ai.types import Context, UserMessage
from picode.session.agent_session import AgentSession
from picode.session.config import Settings
from picode.session.options import SessionOptions
from picode.session.paths import resolve_paths
from picode.tools import coding_tools

StreamFn = Callable[[Model, Context, StreamOptions], AssistantMessageEventStream]


def per_delta_stream_fn(text: str, chunk: int) -> StreamFn:
    """A stream delivering every delta on its own: no throttle, a yield after each push."""

    def stream_fn(
        model: Model, context: Context, options: StreamOptions
    ) -> AssistantMessageEventStream:
        stream = AssistantMessageEventStream(throttle=0.0)
        builder = MessageBuilder(model, stream, context)

        async def produce() -> None:
            index = builder.text_start()
            for start in range(0, len(text), chunk):
                builder.text_delta(index, text[start : start + chunk])
                await asyncio.sleep(0)
            builder.text_end(index)
            builder.finish("stop")

        stream.attach_producer(asyncio.get_running_loop().create_task(produce()))
        return stream

    return stream_fn


async def consume_directly(model: Model, stream_fn: StreamFn, _root: Path) -> float:
    started = time.process_time()
    stream = stream_fn(model, Context(messages=[UserMessage("go")]), StreamOptions())
    async for _event in stream:
        pass
    await stream.result()
    return time.process_time() - started


def no_op(_event: object) -> None:
    return None


async def through_agent(model: Model, stream_fn: StreamFn, _root: Path) -> float:
    agent = Agent(model=model, stream_fn=stream_fn)
    agent.subscribe(no_op)
    started = time.process_time()
    await agent.prompt("go")
    return time.process_time() - started


async def through_session(model: Model, stream_fn: StreamFn, root: Path) -> float:
    options = SessionOptions(
        tools=coding_tools(root),
        cwd=root,
        paths=resolve_paths({"PICODE_HOME": str(root / "home")}),
        settings=Settings(),
        registry=builtin_registry(),
        model=model,
        load_extensions=False,
        stream_fn=stream_fn,
    )
    session = await AgentSession.open(options)
    session.subscribe(no_op)
    started = time.process_time()
    await session.prompt("go")
    elapsed = time.process_time() - started
    await session.close()
    return elapsed


PATHS: dict[str, Callable[[Model, StreamFn, Path], Coroutine[Any, Any, float]]] = {
    "direct": consume_directly,
    "agent": through_agent,
    "session": through_session,
}


def interleaved(
    runs: int, model: Model, stream_fn: StreamFn, before: Callable[[], None], root: Path
) -> dict[str, list[float]]:
    """Seconds per run of each path; the order rotates every run so drift hits all alike."""
    for measure in PATHS.values():  # warm up imports and caches
        before()
        asyncio.run(measure(model, stream_fn, root))
    samples: dict[str, list[float]] = {name: [] for name in PATHS}
    names = list(PATHS)
    for run in range(runs):
        shift = run % len(names)
        for name in names[shift:] + names[:shift]:
            before()
            gc.collect()
            samples[name].append(asyncio.run(PATHS[name](model, stream_fn, root)))
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=20_000)
    parser.add_argument("--chunk", type=int, default=4)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    text = "abcd" * (args.deltas * args.chunk // 4)
    deltas = len(text) // args.chunk

    provider = FauxProvider(chunk_size=args.chunk, delay=0.0)
    turn = FauxTurn([FauxText(text)])

    def script() -> None:
        provider.turns[:] = [turn]

    model = provider.model
    scenarios: list[tuple[str, StreamFn, Callable[[], None]]] = [
        ("throttled (stream_simple + FauxProvider)", stream_simple, script),
        (
            "per-delta (unthrottled, one update per delta)",
            per_delta_stream_fn(text, args.chunk),
            no_op_before,
        ),
    ]
    rows = []
    with tempfile.TemporaryDirectory(prefix="picode-bench-") as folder:
        for name, stream_fn, before in scenarios:
            rows.append((name, interleaved(args.runs, model, stream_fn, before, Path(folder))))
    provider.close()

    scale = 1e6 / deltas
    print(machine())
    print(
        f"\n### Agent and session layers: {deltas:,} deltas of {args.chunk} chars, "
        f"{args.runs} runs (CPU µs per delta, median and min–max)\n"
    )
    print(
        "| scenario | direct (baseline) | Agent | AgentSession | × direct "
        "| added by Agent | added by AgentSession |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, samples in rows:
        direct, agent, session = (Summary.of(samples[key]) for key in PATHS)
        print(
            f"| {name} | {fmt(direct, scale, '', 2)} | {fmt(agent, scale, '', 2)} "
            f"| {fmt(session, scale, '', 2)} | {session.ratio(direct):.2f} "
            f"| {(agent.median - direct.median) * scale:.2f} "
            f"| {(session.median - direct.median) * scale:.2f} |"
        )


def no_op_before() -> None:
    return None


if __name__ == "__main__":
    main()
