"""A scripted provider: replays turns of thinking, text and tool calls with chosen chunking
and timing, errors and hangs. It is the test double for every layer above ``ai`` and the
load generator for the pipeline benchmarks; it goes through the same builder, event stream
and abort path as the real providers.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from picode.ai.builder import MessageBuilder
from picode.ai.models import Model, ModelCost
from picode.ai.options import StreamOptions
from picode.ai.stream import register_api, unregister_api
from picode.ai.types import Context, Message


@dataclass(slots=True)
class FauxText:
    text: str


@dataclass(slots=True)
class FauxThinking:
    text: str
    signature: str | None = "faux-signature"


@dataclass(slots=True)
class FauxToolCall:
    name: str
    #: A dict is sent as JSON; a string is sent verbatim (to script invalid JSON).
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None


FauxBlock: TypeAlias = FauxText | FauxThinking | FauxToolCall


@dataclass(slots=True)
class FauxTurn:
    blocks: Sequence[FauxBlock] = ()
    stop_reason: Literal["stop", "length", "toolUse", "error"] | None = None
    #: Fail with this text: before any content when ``error_before_stream``, else after blocks.
    error: str | None = None
    error_before_stream: bool = False
    #: After the blocks, wait until aborted (to test Esc and abort paths).
    hang: bool = False
    usage: tuple[int, int] | None = None  # (input, output); None = estimated
    chunk_size: int | None = None
    delay: float | None = None
    #: Waits after the blocks that many seconds before finishing (slow endings).
    end_delay: float = 0.0
    #: After the blocks, wait until this is set before finishing (a test decides when).
    release: asyncio.Event | None = None


FauxScript: TypeAlias = FauxTurn | Callable[[Context], FauxTurn]


@dataclass(slots=True)
class FauxRequest:
    system_prompt: str | None
    messages: list[Message]
    tool_names: list[str]
    options: StreamOptions


_ids = itertools.count(1)


def text_turn(text: str, **kwargs: Any) -> FauxTurn:
    return FauxTurn([FauxText(text)], **kwargs)


def tool_turn(*calls: FauxToolCall, text: str | None = None, **kwargs: Any) -> FauxTurn:
    blocks: list[FauxBlock] = [FauxText(text)] if text else []
    blocks.extend(calls)
    return FauxTurn(blocks, **kwargs)


class FauxProvider:
    """Serves a unique API name; ``model`` points at it. Call ``close()`` when done."""

    def __init__(
        self,
        turns: Sequence[FauxScript] = (),
        *,
        chunk_size: int = 8,
        delay: float = 0.0,
        model_id: str = "faux-1",
        context_window: int = 128_000,
        max_tokens: int = 16_384,
        reasoning: bool = True,
        cost: ModelCost | None = None,
    ) -> None:
        self.api = f"faux-{next(_ids)}"
        self.model = Model(
            id=model_id,
            name=f"Faux {model_id}",
            api=self.api,
            provider="faux",
            reasoning=reasoning,
            input=("text", "image"),
            context_window=context_window,
            max_tokens=max_tokens,
            cost=cost or ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75),
        )
        self.turns: list[FauxScript] = list(turns)
        self.chunk_size = chunk_size
        self.delay = delay
        self.requests: list[FauxRequest] = []
        self.aborts = 0
        self.abort_seen = asyncio.Event()
        self.request_seen = asyncio.Event()
        self._call_ids = itertools.count(1)
        register_api(self.api, self._produce)

    def add(self, *turns: FauxScript) -> None:
        self.turns.extend(turns)

    def close(self) -> None:
        unregister_api(self.api)

    @property
    def last_request(self) -> FauxRequest:
        return self.requests[-1]

    async def _produce(
        self, model: Model, context: Context, options: StreamOptions, out: MessageBuilder
    ) -> None:
        self.requests.append(
            FauxRequest(
                context.system_prompt,
                list(context.messages),
                [tool.name for tool in context.tools or ()],
                options,
            )
        )
        self.request_seen.set()
        if not self.turns:
            out.fail("Faux provider: no scripted turn left")
            return
        script = self.turns.pop(0)
        turn = script if isinstance(script, FauxTurn) else script(context)
        try:
            await self._play(turn, out)
        except asyncio.CancelledError:
            self.aborts += 1
            self.abort_seen.set()
            raise

    async def _play(self, turn: FauxTurn, out: MessageBuilder) -> None:
        if turn.error and turn.error_before_stream:
            out.fail(turn.error)
            return
        chunk = turn.chunk_size or self.chunk_size
        delay = self.delay if turn.delay is None else turn.delay
        out.start()
        for block in turn.blocks:
            match block:
                case FauxText(text=text):
                    index = out.text_start()
                    for piece in _chunks(text, chunk):
                        await _pause(delay)
                        out.text_delta(index, piece)
                    out.text_end(index)
                case FauxThinking(text=text, signature=signature):
                    index = out.thinking_start()
                    for piece in _chunks(text, chunk):
                        await _pause(delay)
                        out.thinking_delta(index, piece)
                    if signature:
                        out.thinking_signature(index, signature, append=False)
                    out.thinking_end(index)
                case FauxToolCall(name=name, arguments=arguments, id=call_id):
                    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
                    index = out.toolcall_start(call_id or f"call_{next(self._call_ids)}", name)
                    for piece in _chunks(raw, chunk):
                        await _pause(delay)
                        out.toolcall_delta(index, piece)
                    out.toolcall_end(index)
        if turn.end_delay:
            await asyncio.sleep(turn.end_delay)
        if turn.release is not None:
            await turn.release.wait()
        if turn.hang:
            await asyncio.Event().wait()
        if turn.usage is not None:
            out.set_usage(input=turn.usage[0], output=turn.usage[1])
        if turn.error:
            out.fail(turn.error)
            return
        stop = turn.stop_reason or ("toolUse" if out.message.tool_calls else "stop")
        out.finish(stop)


def _chunks(text: str, size: int) -> list[str]:
    if not text:
        return []
    return [text[i : i + size] for i in range(0, len(text), max(1, size))]


async def _pause(delay: float) -> None:
    if delay > 0:
        await asyncio.sleep(delay)
