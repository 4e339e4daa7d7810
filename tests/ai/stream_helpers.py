"""Small helpers shared by the ai-layer stream tests."""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

from picode.ai.event_stream import AssistantMessageEventStream
from picode.ai.events import AssistantMessageEvent
from picode.ai.types import AssistantMessage
from tests.support import FakeClock, run

__all__ = ["TIMEOUT_S", "FakeClock", "collapsed", "collect", "message", "next_event", "run"]

T = TypeVar("T")

#: Generous: waits end as soon as the awaited thing happens; this only bounds a hang.
TIMEOUT_S = 5.0


def message(**overrides: Any) -> AssistantMessage:
    fields: dict[str, Any] = {"content": [], "api": "test-api", "provider": "test", "model": "m"}
    fields.update(overrides)
    return AssistantMessage(**fields)


async def next_event(
    stream: AssistantMessageEventStream, timeout: float = TIMEOUT_S
) -> AssistantMessageEvent:
    return await asyncio.wait_for(stream.__anext__(), timeout)


async def collect(
    stream: AssistantMessageEventStream, timeout: float = TIMEOUT_S
) -> list[AssistantMessageEvent]:
    async def drain() -> list[AssistantMessageEvent]:
        return [event async for event in stream]

    return await asyncio.wait_for(drain(), timeout)


def summary(event: AssistantMessageEvent) -> tuple[Any, ...]:
    """(type, content_index, delta) for deltas, (type, content_index) for blocks, else (type,)."""
    index = getattr(event, "content_index", None)
    delta = getattr(event, "delta", None)
    if delta is not None:
        return (event.type, index, delta)
    if index is not None:
        return (event.type, index)
    return (event.type,)


async def yield_to_loop(times: int = 20) -> None:
    """Let every ready callback run (no wall-clock waiting)."""
    for _ in range(times):
        await asyncio.sleep(0)


def collapsed(events: list[AssistantMessageEvent]) -> list[tuple[Any, ...]]:
    """Summaries with runs of deltas of one type and index joined: independent of timing."""
    out: list[tuple[Any, ...]] = []
    for event in events:
        item = summary(event)
        if len(item) == 3 and out and len(out[-1]) == 3 and out[-1][:2] == item[:2]:
            out[-1] = (item[0], item[1], out[-1][2] + item[2])
        else:
            out.append(item)
    return out
