"""CPU time to build and hand over one request that carries a long conversation (issue 33).

Every request sends the whole history; this measures what that costs on the event loop
before the bytes reach the socket, per wire API, for a conversation of ``--replies``
replies of ~8.5 kB Markdown (bench/long_session.py's) and for a short one:

- **convert**: the provider's ``build_params`` (picode's history → wire-format dicts);
- **SDK route**: the SDK's own call with those params (``messages.create``,
  ``chat.completions.create``, or ``post`` with the dict body for the Responses API),
  which walks the params (a copy, or the typed transform) and JSON-encodes them;
- **picode route**: what the providers do now, ``_json_body.encode_body`` and ``post``
  with the bytes; the previous request's long strings are reused, as in a conversation
  where each request adds one reply (here the same body each time: one 8.5 kB reply less
  to escape, ~20 µs);
- baseline: ``json.dumps`` of the same params.

Both routes end at an ``httpx`` mock transport that answers at once with an empty event
stream: no socket, no server, only the client's work. CPU time of this thread
(``time.thread_time``), median of ``--runs``, the two routes alternating.

    python bench/request_body.py [--replies 300] [--runs 15]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx2
from anthropic import AsyncAnthropic
from openai import AsyncOpenAI

from _stats import machine
from long_session import markdown_reply
from picode.ai.models import Model
from picode.ai.options import StreamOptions
from picode.ai.providers import anthropic_messages, openai_completions, openai_responses
from picode.ai.providers._json_body import encode_body
from picode.ai.types import AssistantMessage, Context, Message, TextContent, Tool, UserMessage

URL = "http://bench.invalid"
TOOLS = [
    Tool(name, f"The {name} tool", {"type": "object", "properties": {"path": {"type": "string"}}})
    for name in ("read", "write", "edit", "bash", "grep", "find", "ls")
]


def conversation(replies: int, api: str) -> Context:
    messages: list[Message] = []
    for number in range(replies):
        messages.append(UserMessage(f"question {number}"))
        text = TextContent(markdown_reply(number))
        messages.append(AssistantMessage([text], api, "bench", "bench-model", stop_reason="stop"))
    messages.append(UserMessage("question"))
    return Context("You are a coding agent. " * 40, messages, TOOLS)


def _empty_stream(_request: httpx2.Request) -> httpx2.Response:
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=b"")


def _http() -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=httpx2.MockTransport(_empty_stream))


async def _closed(stream: Any) -> None:
    await stream.close()


def routes(api: str) -> tuple[Any, Callable[..., Awaitable[None]], Callable[..., Awaitable[None]]]:
    """(build_params, the SDK's own route, picode's route) for ``api``."""
    if api == "anthropic-messages":
        anthropic = AsyncAnthropic(api_key="k", base_url=URL, max_retries=0, http_client=_http())

        async def sdk_anthropic(params: dict[str, Any]) -> None:
            await _closed(await anthropic.messages.create(**params, stream=True))

        async def ours_anthropic(params: dict[str, Any]) -> None:
            await _closed(await anthropic_messages._post(anthropic, params))

        return anthropic_messages.build_params, sdk_anthropic, ours_anthropic
    client = AsyncOpenAI(api_key="k", base_url=URL, max_retries=0, http_client=_http())
    if api == "openai-completions":

        async def sdk_chat(params: dict[str, Any]) -> None:
            await _closed(await client.chat.completions.create(**params, stream=True))

        async def ours_chat(params: dict[str, Any]) -> None:
            body = encode_body({**params, "stream": True})
            stream = await client.post(
                "/chat/completions", content=body, cast_to=object, stream=True,
                stream_cls=openai_completions.AsyncStream[object],
            )  # fmt: skip
            await _closed(stream)

        return openai_completions.build_params, sdk_chat, ours_chat

    async def sdk_responses(params: dict[str, Any]) -> None:
        body = {**params, "stream": True}
        stream = await client.post(
            "/responses", body=body, cast_to=object, stream=True,
            stream_cls=openai_responses.AsyncStream[object],
        )  # fmt: skip
        await _closed(stream)

    async def ours_responses(params: dict[str, Any]) -> None:
        body = encode_body({**params, "stream": True})
        stream = await client.post(
            "/responses", content=body, cast_to=object, stream=True,
            stream_cls=openai_responses.AsyncStream[object],
        )  # fmt: skip
        await _closed(stream)

    return openai_responses.build_params, sdk_responses, ours_responses


def cpu(call: Callable[[], Any]) -> float:
    gc.collect()
    started = time.thread_time()
    result = call()
    if asyncio.iscoroutine(result):
        asyncio.get_event_loop().run_until_complete(result)
    return time.thread_time() - started


def measure(api: str, replies: int, runs: int) -> dict[str, float]:
    model = Model(id="bench-model", name="bench", api=api, provider="bench", base_url=URL)
    context = conversation(replies, api)
    options = StreamOptions(max_tokens=8192)
    build, sdk, ours = routes(api)
    params = build(model, context, options)
    size = len(encode_body(params))
    times: dict[str, list[float]] = {"convert": [], "sdk": [], "picode": [], "json": []}
    for _ in range(2):  # warm-up: lazy SDK imports, the encoder's strings
        cpu(lambda: sdk(params))
        cpu(lambda: ours(params))
    for _ in range(runs):
        times["convert"].append(cpu(lambda: build(model, context, options)))
        times["sdk"].append(cpu(lambda: sdk(params)))
        times["picode"].append(cpu(lambda: ours(params)))
        times["json"].append(cpu(lambda: json.dumps(params)))
    medians = {key: statistics.median(values) * 1e3 for key, values in times.items()}
    return medians | {"size": size / 1e6, "messages": len(context.messages)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replies", type=int, default=300)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    asyncio.set_event_loop(asyncio.new_event_loop())
    print(machine())
    print(
        "\n| API | replies (messages, body) | convert | SDK route | picode route | "
        "json.dumps | SDK / picode |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for api in ("anthropic-messages", "openai-completions", "openai-responses"):
        for replies in (5, args.replies):
            row = measure(api, replies, args.runs)
            print(
                f"| {api} | {replies} ({row['messages']:.0f}, {row['size']:.2f} MB) "
                f"| {row['convert']:.2f} ms | {row['sdk']:.2f} ms | {row['picode']:.2f} ms "
                f"| {row['json']:.2f} ms | {row['sdk'] / row['picode']:.1f}× |",
                flush=True,
            )


if __name__ == "__main__":
    main()
