"""Helpers for provider tests that stream through a real SDK against the wire server."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from picode.ai.abort import AbortController
from picode.ai.events import (
    AssistantMessageEvent,
    DeltaEvent,
    DoneEvent,
    ErrorEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallDeltaEvent,
)
from picode.ai.models import Model
from picode.ai.options import StreamOptions
from picode.ai.providers._client_cache import close_clients
from picode.ai.stream import stream_simple
from picode.ai.types import (
    AssistantMessage,
    Context,
    TextContent,
    Tool,
    ToolResultMessage,
    UserMessage,
)
from tests.providers.models import READ_TOOL
from tests.wire.server import Chunk, RecordedRequest, WireResponse, WireServer

T = TypeVar("T")

_DELTAS = (TextDeltaEvent, ThinkingDeltaEvent, ToolCallDeltaEvent)

#: Bounds a hang; every wait ends as soon as what it waits for happens.
TIMEOUT_S = 30.0

#: The key every test request carries unless a test says otherwise.
API_KEY = "test-key"

#: ``Outcome.shape`` of one whole streamed block of each kind.
TEXT = ("text_start", "text_delta", "text_end")
THINKING = ("thinking_start", "thinking_delta", "thinking_end")
TOOL_CALL = ("toolcall_start", "toolcall_delta", "toolcall_end")


def run(body: Callable[[], Awaitable[T]], timeout: float = 60.0) -> T:
    """Run an async test body on a fresh loop, closing the SDK clients it made."""

    async def main() -> T:
        try:
            return await asyncio.wait_for(body(), timeout)
        finally:
            await close_clients()

    return asyncio.run(main())


@dataclass
class Outcome:
    events: list[AssistantMessageEvent]
    message: AssistantMessage

    @property
    def shape(self) -> list[str]:
        """Event types with runs of the same delta collapsed (the stream may merge them)."""
        out: list[str] = []
        previous: AssistantMessageEvent | None = None
        for event in self.events:
            same_run = (
                isinstance(event, _DELTAS)
                and isinstance(previous, type(event))
                and _delta(previous).content_index == event.content_index
            )
            if not same_run:
                out.append(event.type)
            previous = event
        return out

    @property
    def terminal(self) -> DoneEvent | ErrorEvent:
        last = self.events[-1]
        assert isinstance(last, DoneEvent | ErrorEvent), last
        return last

    def deltas(self, index: int) -> str:
        """All delta text streamed for one content block, joined."""
        return "".join(
            event.delta
            for event in self.events
            if isinstance(event, _DELTAS) and event.content_index == index
        )


def _delta(event: object) -> DeltaEvent:
    assert isinstance(event, _DELTAS)
    return event


def simple_context(text: str = "Hello", tools: list[Tool] | None = None) -> Context:
    return Context(system_prompt="Be brief.", messages=[UserMessage(text)], tools=tools)


def options(**fields: Any) -> StreamOptions:
    """Stream options carrying the test key (``api_key=None`` for none at all)."""
    return StreamOptions(**{"api_key": API_KEY, **fields})


def stream_once(model: Model, context: Context | None = None, **option_fields: Any) -> Outcome:
    """Stream one reply (to ``simple_context()`` unless given) on a fresh loop."""
    return run(lambda: stream_all(model, context or simple_context(), options(**option_fields)))


def answer_first_call(model: Model, output: str, **option_fields: Any) -> list[Outcome]:
    """Two turns on one loop, as the agent runs them: stream a reply to
    ``simple_context(tools=[READ_TOOL])``, answer its first tool call with ``output`` and
    stream the next reply."""

    async def turns() -> list[Outcome]:
        context = simple_context(tools=[READ_TOOL])
        first = await stream_all(model, context, options(**option_fields))
        call = first.message.tool_calls[0]
        context.messages.append(first.message)
        context.messages.append(ToolResultMessage(call.id, call.name, [TextContent(output)]))
        return [first, await stream_all(model, context, options(**option_fields))]

    return run(turns)


def halved(chunks: Sequence[Chunk]) -> WireResponse:
    """The body with every chunk cut one byte past its middle, so that multi-byte
    characters straddle chunks."""
    pieces: list[Chunk] = []
    for chunk in chunks:
        data = chunk.encode("utf-8") if isinstance(chunk, str) else chunk
        assert isinstance(data, bytes), chunk
        middle = len(data) // 2 + 1
        pieces.extend([data[:middle], data[middle:]])
    return WireResponse(body=pieces)


async def stream_all(
    model: Model, context: Context, options: StreamOptions | None = None
) -> Outcome:
    stream = stream_simple(model, context, options or StreamOptions(api_key=API_KEY))

    async def drain() -> list[AssistantMessageEvent]:
        return [event async for event in stream]

    events = await asyncio.wait_for(drain(), TIMEOUT_S)
    return Outcome(events, await stream.result())


async def stream_then_abort(
    model: Model, context: Context, *, abort_after: type, options: StreamOptions | None = None
) -> tuple[Outcome, AbortController]:
    """Stream until the first event of type ``abort_after``, then abort and drain the rest."""
    controller = AbortController()
    base = options or StreamOptions(api_key=API_KEY)
    base.signal = controller.signal
    stream = stream_simple(model, context, base)
    events: list[AssistantMessageEvent] = []

    async def drain() -> None:
        async for event in stream:
            events.append(event)
            if isinstance(event, abort_after) and not controller.aborted:
                controller.abort()

    await asyncio.wait_for(drain(), TIMEOUT_S)
    return Outcome(events, await stream.result()), controller


async def wait_closed(request: RecordedRequest, timeout: float = 5.0) -> bool:
    """Whether the server saw the client close ``request``'s connection within ``timeout``."""
    return await asyncio.to_thread(request.wait_closed, timeout)


def abort_at_first_text(model: Model, wire: WireServer) -> tuple[Outcome, bool]:
    """Stream, abort at the first text delta and drain the rest; also whether the server
    then saw the connection close (checked before the test's SDK clients are closed, so
    only the abort can have closed it)."""

    async def body() -> tuple[Outcome, bool]:
        outcome, _ = await stream_then_abort(model, simple_context(), abort_after=TextDeltaEvent)
        return outcome, await wait_closed(wire.requests[0])

    return run(body)


def abort_once_requested(model: Model, wire: WireServer) -> tuple[Outcome, bool]:
    """Abort as soon as the server has the request (before any content); drain the stream
    and report whether the server then saw the connection close."""

    async def body() -> tuple[Outcome, bool]:
        controller = AbortController()
        stream = stream_simple(model, simple_context(), options(signal=controller.signal))

        async def drain() -> list[AssistantMessageEvent]:
            return [event async for event in stream]

        draining = asyncio.ensure_future(asyncio.wait_for(drain(), TIMEOUT_S))
        seen = await asyncio.to_thread(wire.wait_for_requests, 1, TIMEOUT_S)
        assert seen, "the request never reached the server"
        controller.abort()
        events = await draining
        closed = await wait_closed(wire.requests[0])
        return Outcome(events, await stream.result()), closed

    return run(body)
