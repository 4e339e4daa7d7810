"""Per-delta overhead of the agent loop over the bare provider event stream.

Two scenarios, each timed (a) consuming the stream directly and (b) through ``Agent`` with
one no-op listener; the difference is what the agent layer adds per provider delta.

- ``throttled``: ``stream_simple`` with the scripted provider, no delay. The provider pushes
  every delta at once, so the 50 ms throttle merges them and the agent sees few updates.
- ``per-delta``: an unthrottled stream whose producer yields to the loop after every delta,
  so every delta becomes its own ``MessageUpdate`` (the worst case for the agent layer).

Usage: python bench/agent_loop.py [--deltas 20000] [--chunk 4] [--runs 9]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import statistics
import time
from collections.abc import Awaitable, Callable

from picode.agent.agent import Agent
from picode.agent.events import AgentEvent
from picode.ai.builder import MessageBuilder
from picode.ai.event_stream import AssistantMessageEventStream
from picode.ai.models import Model
from picode.ai.providers.faux import FauxProvider, FauxText, FauxTurn
from picode.ai.stream import StreamOptions, stream_simple
from picode.ai.types import Context, UserMessage

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


async def consume_directly(model: Model, stream_fn: StreamFn) -> float:
    started = time.perf_counter()
    stream = stream_fn(model, Context(messages=[UserMessage("go")]), StreamOptions())
    async for _event in stream:
        pass
    await stream.result()
    return time.perf_counter() - started


async def through_agent(model: Model, stream_fn: StreamFn) -> float:
    agent = Agent(model=model, stream_fn=stream_fn)

    def no_op(_event: AgentEvent) -> None:
        return None

    agent.subscribe(no_op)
    started = time.perf_counter()
    await agent.prompt("go")
    return time.perf_counter() - started


def paired_medians(
    runs: int,
    direct: Callable[[], Awaitable[float]],
    agent: Callable[[], Awaitable[float]],
    before: Callable[[], None],
) -> tuple[float, float, float]:
    """Median seconds of each, and the median of per-run differences (less noisy on a busy
    machine: both halves of a pair see the same load). Runs alternate which goes first."""
    for measure in (direct, agent):  # warm up imports and caches
        before()
        asyncio.run(measure())
    direct_samples, agent_samples, differences = [], [], []
    for run in range(runs):
        pair = {}
        order = (("direct", direct), ("agent", agent))
        for name, measure in order if run % 2 == 0 else order[::-1]:
            before()
            gc.collect()
            pair[name] = asyncio.run(measure())
        direct_samples.append(pair["direct"])
        agent_samples.append(pair["agent"])
        differences.append(pair["agent"] - pair["direct"])
    return (
        statistics.median(direct_samples),
        statistics.median(agent_samples),
        statistics.median(differences),
    )


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

    per_delta = per_delta_stream_fn(text, args.chunk)
    model = provider.model
    rows = []
    scenarios: list[tuple[str, StreamFn, Callable[[], None]]] = [
        ("throttled (stream_simple + FauxProvider)", stream_simple, script),
        ("per-delta (unthrottled, one update per delta)", per_delta, lambda: None),
    ]
    for name, stream_fn, before in scenarios:
        medians = paired_medians(
            args.runs,
            functools.partial(consume_directly, model, stream_fn),
            functools.partial(through_agent, model, stream_fn),
            before,
        )
        rows.append((name, *medians))
    provider.close()

    print(f"{deltas:,} deltas of {args.chunk} chars, median of {args.runs} runs\n")
    print("| scenario | direct µs/delta | Agent µs/delta | overhead µs/delta (paired median) |")
    print("|---|---:|---:|---:|")
    for name, direct, agent, difference in rows:
        scale = 1e6 / deltas
        print(f"| {name} | {direct * scale:.2f} | {agent * scale:.2f} | {difference * scale:.2f} |")


if __name__ == "__main__":
    main()
