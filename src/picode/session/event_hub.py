"""One ordered stream of session events to any number of listeners (docs/architecture.md)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from picode.session.events import AnySessionEvent, Notice

log = logging.getLogger(__name__)

Listener = Callable[[AnySessionEvent], Awaitable[None] | None]


class EventHub:
    """Listeners run in subscription order; one that raises is logged and the rest still
    hear the event."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._early_notices: list[Notice] = []
        self._background: set[asyncio.Future[Any]] = set()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        # What went wrong while opening (an unreadable session line, a broken extension)
        # happened before any front end listened: the first one still hears of it.
        early, self._early_notices = self._early_notices, []
        for notice in early:
            self._deliver(listener, notice)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    async def emit(self, event: AnySessionEvent) -> None:
        for listener in list(self._listeners):
            try:
                result = listener(event)
                if result is not None:
                    await result
            except Exception:
                log.exception("session listener failed on %s", event.type)

    def emit_soon(self, event: AnySessionEvent) -> None:
        """Emit from synchronous code: a listener's coroutine runs as a task."""
        if not self._listeners and isinstance(event, Notice):
            self._early_notices.append(event)
        for listener in list(self._listeners):
            self._deliver(listener, event)

    def spawn(self, work: Awaitable[Any]) -> None:
        """Run ``work`` in the background, holding a reference until it is done."""
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _deliver(self, listener: Listener, event: AnySessionEvent) -> None:
        try:
            result = listener(event)
            if result is not None:
                self.spawn(result)
        except Exception:
            log.exception("session listener failed on %s", event.type)
