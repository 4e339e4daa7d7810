"""Helpers for provider tests that stream through a real SDK against the wire server."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

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
from picode.ai.providers._client_cache import close_clients
from picode.ai.stream import StreamOptions, stream_simple
from picode.ai.types import AssistantMessage, Context, Tool, UserMessage

T = TypeVar("T")

_DELTAS = (TextDeltaEvent, ThinkingDeltaEvent, ToolCallDeltaEvent)

#: Bounds a hang; every wait ends as soon as what it waits for happens.
TIMEOUT_S = 30.0


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


async def stream_all(
    model: Model, context: Context, options: StreamOptions | None = None
) -> Outcome:
    stream = stream_simple(model, context, options or StreamOptions(api_key="test-key"))

    async def drain() -> list[AssistantMessageEvent]:
        return [event async for event in stream]

    events = await asyncio.wait_for(drain(), TIMEOUT_S)
    return Outcome(events, await stream.result())


async def stream_then_abort(
    model: Model, context: Context, *, abort_after: type, options: StreamOptions | None = None
) -> tuple[Outcome, AbortController]:
    """Stream until the first event of type ``abort_after``, then abort and drain the rest."""
    controller = AbortController()
    base = options or StreamOptions(api_key="test-key")
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


async def wait_closed(request: object, timeout: float = 5.0) -> bool:
    """Whether the server saw the client close ``request``'s connection within ``timeout``."""
    return await asyncio.to_thread(request.wait_closed, timeout)  # type: ignore[attr-defined]


async def abort_once_requested(
    model: Model, context: Context, wire: object, options: StreamOptions | None = None
) -> tuple[Outcome, bool]:
    """Abort as soon as the server has the request (before any content); drain the stream
    and report whether the server then saw the connection close."""
    controller = AbortController()
    base = options or StreamOptions(api_key="test-key")
    base.signal = controller.signal
    stream = stream_simple(model, context, base)

    async def drain() -> list[AssistantMessageEvent]:
        return [event async for event in stream]

    draining = asyncio.ensure_future(asyncio.wait_for(drain(), TIMEOUT_S))
    seen = await asyncio.to_thread(wire.wait_for_requests, 1, TIMEOUT_S)  # type: ignore[attr-defined]
    assert seen, "the request never reached the server"
    controller.abort()
    events = await draining
    closed = await wait_closed(wire.requests[0], timeout=2.0)  # type: ignore[attr-defined]
    return Outcome(events, await stream.result()), closed
