"""AssistantMessageEventStream: a provider pushes, one consumer iterates (docs/streaming.md).

The provider pushes at full speed; nothing here slows it down (this is not backpressure).
What the consumer sees is smoothed: deltas that arrive within ``throttle`` seconds of the
previous delivery are merged, but only with the delta right before them when it has the same
type and content index. Any other event flushes the buffered deltas first.

No task is created here: the iterator waits on a future that ``push`` or a timer resolves, so
abandoning the iterator leaves nothing behind. The attached producer is cancelled by
``aclose()``, or when the last reference to the stream goes (the producer only holds it
weakly). ``result()`` is resolved by the terminal event itself, so a consumer that never
iterates can still await it.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from picode.ai.events import (
    AssistantMessageEvent,
    DoneEvent,
    ErrorEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallDeltaEvent,
)
from picode.ai.types import AssistantMessage

DEFAULT_THROTTLE_S = 0.05
_NO_RESULT = "the stream ended without a final message"
_DELTAS = (TextDeltaEvent, ThinkingDeltaEvent, ToolCallDeltaEvent)


class _PendingDelta:
    """Deltas merged so far: joined once at delivery so merging stays linear."""

    __slots__ = ("cls", "content_index", "partial", "parts")

    def __init__(self, event: TextDeltaEvent | ThinkingDeltaEvent | ToolCallDeltaEvent) -> None:
        self.cls = type(event)
        self.content_index = event.content_index
        self.parts = [event.delta]
        self.partial = event.partial

    def build(self) -> TextDeltaEvent | ThinkingDeltaEvent | ToolCallDeltaEvent:
        delta = self.parts[0] if len(self.parts) == 1 else "".join(self.parts)
        return self.cls(self.content_index, delta, self.partial)


class AssistantMessageEventStream:
    """Async-iterable stream of assistant events with ``await result()``."""

    def __init__(
        self, throttle: float = DEFAULT_THROTTLE_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._throttle = throttle
        self._clock = clock
        self._incoming: deque[AssistantMessageEvent] = deque()
        self._ready: deque[AssistantMessageEvent] = deque()
        self._pending: list[_PendingDelta] = []
        # Minus infinity: the first delta goes out at once, whatever the clock reads.
        self._last_delivery = -math.inf
        self._waiter: asyncio.Future[None] | None = None
        # While the consumer sits out a throttle interval, further deltas need not wake it.
        self._wake_on_delta = True
        self._ended = False  # terminal event pushed (or end() called)
        self._drained = False  # consumer has received the terminal event
        self._closed = False
        self._result: asyncio.Future[AssistantMessage] | None = None
        self._final: AssistantMessage | None = None
        self._producer: asyncio.Task[Any] | None = None
        #: Called with a content index before a merged tool-call delta is delivered, so the
        #: partial's arguments are parsed once per delivery instead of once per byte.
        self.before_toolcall_delivery: Callable[[int], None] | None = None

    # --- producer side -----------------------------------------------------------------

    def push(self, event: AssistantMessageEvent) -> None:
        if self._ended:
            return
        if isinstance(event, DoneEvent | ErrorEvent):
            self._ended = True
            self._final = event.message
            if self._result is not None and not self._result.done():
                self._result.set_result(event.message)
        if self._closed:
            return
        self._incoming.append(event)
        if self._wake_on_delta or not isinstance(event, _DELTAS):
            self._wake()

    def end(self, message: AssistantMessage | None = None) -> None:
        """Stop accepting events; with a message, also resolve ``result()`` with it.

        Without one, ``result()`` raises ``RuntimeError`` instead of waiting forever.
        """
        if self._ended:
            return
        self._ended = True
        result = self._result
        if message is not None:
            self._final = message
            if result is not None and not result.done():
                result.set_result(message)
        elif result is not None and not result.done():
            result.set_exception(RuntimeError(_NO_RESULT))
        self._wake()

    def attach_producer(self, task: asyncio.Task[Any]) -> None:
        """Let ``aclose()`` cancel the task that feeds this stream."""
        self._producer = task

    @property
    def ended(self) -> bool:
        return self._ended

    # --- consumer side -----------------------------------------------------------------

    async def result(self) -> AssistantMessage:
        if self._final is not None:
            return self._final
        if self._ended:
            raise RuntimeError(_NO_RESULT)
        if self._result is None:
            self._result = asyncio.get_running_loop().create_future()
        return await asyncio.shield(self._result)

    def __aiter__(self) -> AssistantMessageEventStream:
        return self

    async def __anext__(self) -> AssistantMessageEvent:
        while True:
            if self._ready:
                event = self._ready.popleft()
                if isinstance(event, DoneEvent | ErrorEvent):
                    self._drained = True
                return event
            if self._drained or self._closed:
                raise StopAsyncIteration
            self._absorb()
            if self._ready:
                continue
            if self._pending:
                wait = self._last_delivery + self._throttle - self._clock()
                if wait <= 0 or self._ended:
                    self._flush()
                    continue
                self._wake_on_delta = False
                try:
                    await self._wait(wait)
                finally:
                    self._wake_on_delta = True
                continue
            if self._ended and not self._incoming:
                # end() without a terminal event: nothing more will come.
                raise StopAsyncIteration
            await self._wait(None)

    async def aclose(self) -> None:
        """Stop iterating; cancels the attached producer if it is still running."""
        self._closed = True
        self._incoming.clear()
        self._ready.clear()
        self._pending.clear()
        producer = self._producer
        if producer is not None and not producer.done():
            producer.cancel()
            # asyncio.wait neither raises the producer's failure nor swallows our own
            # cancellation, which awaiting the task inside try/except would.
            await asyncio.wait([producer])
            if not producer.cancelled():
                producer.exception()  # retrieved: its failure is not ours to report

    def __del__(self) -> None:
        # Abandoned without aclose(): stop the producer, nobody will read what it makes.
        producer = self._producer
        if producer is not None and not producer.done():
            try:
                producer.cancel()
            except RuntimeError:  # its event loop is already closed
                pass

    # --- internals ---------------------------------------------------------------------

    def _absorb(self) -> None:
        incoming = self._incoming
        pending = self._pending
        while incoming:
            event = incoming.popleft()
            if isinstance(event, _DELTAS):
                if pending:
                    last = pending[-1]
                    if last.cls is type(event) and last.content_index == event.content_index:
                        last.parts.append(event.delta)
                        last.partial = event.partial
                        continue
                pending.append(_PendingDelta(event))
                continue
            if pending:
                self._flush()
            self._ready.append(event)
            if isinstance(event, DoneEvent | ErrorEvent):
                incoming.clear()
                return

    def _flush(self) -> None:
        hook = self.before_toolcall_delivery
        for item in self._pending:
            if hook is not None and item.cls is ToolCallDeltaEvent:
                hook(item.content_index)
            self._ready.append(item.build())
        self._pending.clear()
        self._last_delivery = self._clock()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _wait(self, timeout: float | None) -> None:
        loop = asyncio.get_running_loop()
        waiter = loop.create_future()
        self._waiter = waiter
        timer = None
        if timeout is not None:
            timer = loop.call_later(timeout, _resolve, waiter)
        try:
            await waiter
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
