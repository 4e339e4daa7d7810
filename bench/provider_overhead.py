"""Per-delta overhead of each provider over iterating the same SDK stream directly.

For every API (anthropic-messages, openai-completions, openai-responses,
google-generative-ai) both sides read the same pre-built streaming body (``--deltas`` text
deltas, one event or chunk each) from the wire test server on 127.0.0.1: (a) the bare SDK
call, iterating its events and doing nothing; (b) ``stream_simple`` through the provider,
the builder and the throttled event stream, with a consumer that drains the stream. Runs
alternate between (a) and (b) after a warm-up; the median of the paired differences (b − a),
divided by the number of deltas, is what picode adds per provider delta.

Times are CPU time of the event-loop thread (``time.thread_time``): the wire server runs in
other threads and the machine may be shared, and neither should count. The event loop
thread does all the parsing and mapping, so its CPU time is the cost being compared.

Usage: python bench/provider_overhead.py [--deltas 2000] [--runs 7] [--warmups 1]
       [--apis anthropic-messages,openai-completions,openai-responses,google-generative-ai]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from anthropic import AsyncAnthropic
from google import genai
from google.genai import types as genai_types
from openai import AsyncOpenAI
from tests.wire.anthropic_protocol import AnthropicStream
from tests.wire.chat_protocol import ChatStream
from tests.wire.gemini_protocol import GeminiStream, text
from tests.wire.gemini_protocol import usage as gemini_usage
from tests.wire.responses_protocol import ResponsesStream
from tests.wire.responses_protocol import usage as responses_usage
from tests.wire.server import Chunk, WireResponse, WireServer

from _stats import Summary, machine
from picode.ai.models import Model
from picode.ai.options import StreamOptions
from picode.ai.providers._client_cache import close_clients
from picode.ai.stream import stream_simple
from picode.ai.types import Context, UserMessage

DELTA = "abc "
MODEL_ID = "bench-model"
CONTEXT = Context(messages=[UserMessage("go")])
Timed = Callable[[], Awaitable[float]]


@dataclass(slots=True)
class Case:
    """One API: its reply body, the bare SDK iteration and the model picode streams from."""

    api: str
    body: WireResponse
    raw: Timed
    model: Model


@dataclass(slots=True)
class Result:
    api: str
    raw: Summary
    picode: Summary
    #: picode minus raw of each alternating pair: the spread of the overhead itself.
    paired: Summary


def one_chunk(chunks: Sequence[Chunk]) -> WireResponse:
    """The body as one chunk, so the server's write loop is not what gets measured."""
    body = "".join(chunk for chunk in chunks if isinstance(chunk, str))
    return WireResponse(body=[body.encode("utf-8")])


def anthropic_body(deltas: int) -> WireResponse:
    return one_chunk(AnthropicStream().text(*[DELTA] * deltas).stop().body())


def chat_body(deltas: int) -> WireResponse:
    return one_chunk(ChatStream().text(*[DELTA] * deltas).end().body())


def responses_body(deltas: int) -> WireResponse:
    script = ResponsesStream(model=MODEL_ID).created().message([DELTA] * deltas)
    return one_chunk(script.completed(responses_usage(1, deltas)).chunks)


def gemini_body(deltas: int) -> WireResponse:
    script = GeminiStream(model_version=MODEL_ID)
    for _ in range(deltas):
        script.chunk(text(DELTA))
    return one_chunk(script.chunk(finish="STOP", usage_=gemini_usage(1, deltas)).chunks)


def bench_model(api: str, provider: str, base_url: str) -> Model:
    return Model(id=MODEL_ID, name="bench", api=api, provider=provider, base_url=base_url)


async def drain_picode(model: Model) -> float:
    started = time.thread_time()
    stream = stream_simple(model, CONTEXT, StreamOptions(api_key="bench", max_tokens=1024))
    async for _event in stream:
        pass
    message = await stream.result()
    elapsed = time.thread_time() - started
    assert message.stop_reason == "stop", message.error_message
    return elapsed


async def measure(case: Case, wire: WireServer, args: argparse.Namespace) -> Result:
    def picode() -> Awaitable[float]:
        return drain_picode(case.model)

    for _ in range(args.warmups):  # imports, clients, connection pools, lazy SDK models
        wire.enqueue(case.body, case.body)
        await case.raw()
        await picode()
    raw_times: list[float] = []
    picode_times: list[float] = []
    for _ in range(args.runs):
        for timed, into in ((case.raw, raw_times), (picode, picode_times)):
            wire.enqueue(case.body)
            gc.collect()
            into.append(await timed())
    paired = [ours - bare for bare, ours in zip(raw_times, picode_times, strict=True)]
    return Result(case.api, Summary.of(raw_times), Summary.of(picode_times), Summary.of(paired))


class RawClients:
    """The bare SDK clients, each iterating one streamed reply and discarding its events."""

    def __init__(self, url: str) -> None:
        self.anthropic = AsyncAnthropic(api_key="bench", base_url=url, max_retries=0)
        self.openai = AsyncOpenAI(api_key="bench", base_url=url + "/v1", max_retries=0)
        self.google = genai.Client(
            api_key="bench",
            vertexai=False,
            http_options=genai_types.HttpOptions(
                base_url=url, retry_options=genai_types.HttpRetryOptions(attempts=1)
            ),
        )

    async def close(self) -> None:
        await self.anthropic.close()
        await self.openai.close()
        await self.google.aio.aclose()

    async def anthropic_messages(self) -> float:
        started = time.thread_time()
        stream = await self.anthropic.messages.create(
            model=MODEL_ID,
            max_tokens=1024,
            messages=[{"role": "user", "content": "go"}],
            stream=True,
        )
        async with stream:
            async for _event in stream:
                pass
        return time.thread_time() - started

    async def openai_completions(self) -> float:
        started = time.thread_time()
        stream = await self.openai.chat.completions.create(
            model=MODEL_ID,
            messages=[{"role": "user", "content": "go"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        async with stream:
            async for _event in stream:
                pass
        return time.thread_time() - started

    async def openai_responses(self) -> float:
        started = time.thread_time()
        stream = await self.openai.responses.create(
            model=MODEL_ID, input="go", store=False, stream=True
        )
        async with stream:
            async for _event in stream:
                pass
        return time.thread_time() - started

    async def google_generative_ai(self) -> float:
        started = time.thread_time()
        stream = await self.google.aio.models.generate_content_stream(model=MODEL_ID, contents="go")
        async for _chunk in stream:
            pass
        return time.thread_time() - started


def cases(wire: WireServer, raw: RawClients, deltas: int) -> list[Case]:
    url = wire.url
    return [
        Case(
            "anthropic-messages",
            anthropic_body(deltas),
            raw.anthropic_messages,
            bench_model("anthropic-messages", "anthropic", url),
        ),
        Case(
            "openai-completions",
            chat_body(deltas),
            raw.openai_completions,
            bench_model("openai-completions", "local", url + "/v1"),
        ),
        Case(
            "openai-responses",
            responses_body(deltas),
            raw.openai_responses,
            bench_model("openai-responses", "openai", url + "/v1"),
        ),
        Case(
            "google-generative-ai",
            gemini_body(deltas),
            raw.google_generative_ai,
            bench_model("google-generative-ai", "google", url),
        ),
    ]


def per_delta(seconds: float, deltas: int) -> str:
    return f"{seconds / deltas * 1e6:.1f}"


def cell(median: float, low: float, high: float, deltas: int) -> str:
    """``median (low–high)`` in µs per delta."""
    return f"{per_delta(median, deltas)} ({per_delta(low, deltas)}–{per_delta(high, deltas)})"


def table(results: Sequence[Result], args: argparse.Namespace) -> str:
    n = args.deltas
    lines = [
        machine(),
        "",
        f"{n:,} text deltas per reply; {args.runs} alternating runs each after "
        f"{args.warmups} warm-up(s); event-loop thread CPU time; median (min–max).",
        "",
        "| API | SDK alone µs/delta | through picode µs/delta | picode adds µs/delta "
        "(paired median, IQR) | ratio |",
        "| --- | --- | --- | --- | --- |",
    ]
    for result in results:
        raw, ours, paired = result.raw, result.picode, result.paired
        lines.append(
            f"| {result.api} | {cell(raw.median, raw.low, raw.high, n)} "
            f"| {cell(ours.median, ours.low, ours.high, n)} "
            f"| {cell(paired.median, paired.q1, paired.q3, n)} | {ours.ratio(raw):.2f} |"
        )
    return "\n".join(lines)


async def main(args: argparse.Namespace) -> None:
    results: list[Result] = []
    with WireServer() as wire:
        raw = RawClients(wire.url)
        try:
            for case in cases(wire, raw, args.deltas):
                if case.api in args.apis:
                    results.append(await measure(case, wire, args))
                    print(f"measured {case.api}", file=sys.stderr)
        finally:
            await raw.close()
            await close_clients()
    print(table(results, args))


ALL_APIS = ("anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--deltas", type=int, default=2000, help="text deltas per reply")
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each side")
    parser.add_argument("--warmups", type=int, default=1, help="untimed runs of each side first")
    parser.add_argument(
        "--apis",
        default=",".join(ALL_APIS),
        help="comma-separated APIs to measure (default: all four)",
    )
    args = parser.parse_args()
    args.apis = [api.strip() for api in args.apis.split(",") if api.strip()]
    unknown = sorted(set(args.apis) - set(ALL_APIS))
    if unknown:
        parser.error(f"unknown API(s) {', '.join(unknown)}; choose from {', '.join(ALL_APIS)}")
    if args.deltas < 1 or args.runs < 1 or args.warmups < 0:
        parser.error("--deltas and --runs must be at least 1, --warmups at least 0")
    return args


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
