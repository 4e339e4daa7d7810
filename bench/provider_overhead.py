"""Per-delta overhead of the anthropic-messages and openai-completions providers over
iterating the same SDK stream directly.

Both sides read the same pre-built SSE body (``--deltas`` text deltas) from the wire test
server on 127.0.0.1: (a) the bare SDK call, iterating its events and doing nothing; (b)
``stream_simple`` through the provider, the builder and the throttled event stream, with a
consumer that drains the stream. Runs alternate between (a) and (b); the difference of the
medians divided by the number of deltas is what picode adds per provider delta.

Times are CPU time of the event-loop thread (``time.thread_time``): the wire server runs in
other threads and the machine may be shared, and neither should count. The event loop
thread does all the parsing and mapping, so its CPU time is the cost being compared.

Usage: python bench/provider_overhead.py [--deltas 5000] [--runs 9]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from anthropic import AsyncAnthropic
from openai import AsyncOpenAI
from tests.wire.anthropic_protocol import AnthropicStream
from tests.wire.chat_protocol import ChatStream
from tests.wire.server import WireResponse, WireServer

from picode.ai.models import Model
from picode.ai.providers._client_cache import close_clients
from picode.ai.stream import StreamOptions, stream_simple
from picode.ai.types import Context, UserMessage

DELTA = "abc "
CONTEXT = Context(messages=[UserMessage("go")])
Timed = Callable[[], Awaitable[float]]


def one_chunk(chunks: Sequence[object]) -> WireResponse:
    """The body as one chunk, so the server's write loop is not what gets measured."""
    body = "".join(chunk for chunk in chunks if isinstance(chunk, str))
    return WireResponse(body=[body.encode("utf-8")])


def anthropic_body(deltas: int) -> WireResponse:
    return one_chunk(AnthropicStream().text(*[DELTA] * deltas).stop().body())


def chat_body(deltas: int) -> WireResponse:
    return one_chunk(ChatStream().text(*[DELTA] * deltas).end().body())


async def drain_picode(model: Model) -> float:
    started = time.thread_time()
    stream = stream_simple(model, CONTEXT, StreamOptions(api_key="bench", max_tokens=1024))
    async for _event in stream:
        pass
    message = await stream.result()
    elapsed = time.thread_time() - started
    assert message.stop_reason == "stop", message.error_message
    return elapsed


async def measure(
    name: str, wire: WireServer, body: WireResponse, raw: Timed, picode: Timed, runs: int
) -> None:
    raw_times: list[float] = []
    picode_times: list[float] = []
    for _ in range(2):  # warm both paths: imports, clients, connection pools
        wire.enqueue(body, body)
        await raw()
        await picode()
    for _ in range(runs):
        for timed, into in ((raw, raw_times), (picode, picode_times)):
            wire.enqueue(body)
            gc.collect()
            into.append(await timed())
    raw_median = statistics.median(raw_times)
    picode_median = statistics.median(picode_times)
    deltas = ARGS.deltas
    print(
        f"{name:20s} raw SDK {raw_median * 1e3:8.1f} ms   picode {picode_median * 1e3:8.1f} ms   "
        f"ratio {picode_median / raw_median:5.2f}   "
        f"overhead {(picode_median - raw_median) / deltas * 1e6:6.2f} µs/delta   "
        f"SDK alone {raw_median / deltas * 1e6:6.2f} µs/delta"
    )


async def main() -> None:
    with WireServer() as wire:
        anthropic_model = Model(
            id="claude-bench",
            name="bench",
            api="anthropic-messages",
            provider="anthropic",
            base_url=wire.url,
        )
        chat_model = Model(
            id="bench",
            name="bench",
            api="openai-completions",
            provider="local",
            base_url=wire.url + "/v1",
        )
        anthropic = AsyncAnthropic(api_key="bench", base_url=wire.url, max_retries=0)
        chat = AsyncOpenAI(api_key="bench", base_url=wire.url + "/v1", max_retries=0)

        async def raw_anthropic() -> float:
            started = time.thread_time()
            stream = await anthropic.messages.create(
                model="claude-bench",
                max_tokens=1024,
                messages=[{"role": "user", "content": "go"}],
                stream=True,
            )
            async with stream:
                async for _event in stream:
                    pass
            return time.thread_time() - started

        async def raw_chat() -> float:
            started = time.thread_time()
            stream = await chat.chat.completions.create(
                model="bench",
                messages=[{"role": "user", "content": "go"}],
                stream=True,
                stream_options={"include_usage": True},
            )
            async with stream:
                async for _event in stream:
                    pass
            return time.thread_time() - started

        try:
            await measure(
                "anthropic-messages",
                wire,
                anthropic_body(ARGS.deltas),
                raw_anthropic,
                lambda: drain_picode(anthropic_model),
                ARGS.runs,
            )
            await measure(
                "openai-completions",
                wire,
                chat_body(ARGS.deltas),
                raw_chat,
                lambda: drain_picode(chat_model),
                ARGS.runs,
            )
        finally:
            await anthropic.close()
            await chat.close()
            await close_clients()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=9)
    ARGS = parser.parse_args()
    asyncio.run(main())
