"""AbortController / AbortSignal: one cancellation fact shared by streams, tools and retries.

A signal is a plain object, not a cancel scope: it can be handed across layers, combined with
``AbortSignal.any`` and observed by callbacks (to close a socket or kill a process group at
once) or awaited. It lives on the event loop's thread; aborting never raises into the caller,
and a failing callback is reported, not propagated.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Any

log = logging.getLogger(__name__)

Unsubscribe = Callable[[], None]


class AbortSignal:
    __slots__ = ("_aborted", "_callbacks", "_reason", "_unhook_sources", "_waiters")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: Any = None
        self._callbacks: list[Callable[[Any], None]] = []
        self._waiters: list[asyncio.Future[None]] = []
        self._unhook_sources: list[Unsubscribe] = []

    @property
    def aborted(self) -> bool:
        return self._aborted

    @property
    def reason(self) -> Any:
        return self._reason

    def add_callback(self, callback: Callable[[Any], None]) -> Unsubscribe:
        """Call ``callback(reason)`` once on abort (at once if already aborted)."""
        if self._aborted:
            _safe_call(callback, self._reason)
            return _noop
        self._callbacks.append(callback)

        def unsubscribe() -> None:
            try:
                self._callbacks.remove(callback)
            except ValueError:
                pass

        return unsubscribe

    async def wait(self) -> Any:
        """Return the reason once aborted."""
        if self._aborted:
            return self._reason
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)
        return self._reason

    def dispose(self) -> None:
        """Detach a signal made by ``any`` from its sources (it will no longer follow them)."""
        for unhook in self._unhook_sources:
            unhook()
        self._unhook_sources.clear()

    def _fire(self, reason: Any) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._reason = reason
        self.dispose()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            _safe_call(callback, reason)
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                try:
                    waiter.set_result(None)
                except RuntimeError:  # its event loop is closed: nobody is waiting any more
                    pass

    @staticmethod
    def any(signals: Iterable[AbortSignal]) -> AbortSignal:
        """A signal that aborts as soon as any source does, then unhooks from all of them."""
        combined = AbortSignal()
        sources = list(signals)
        for source in sources:
            if source.aborted:
                combined._fire(source.reason)
                return combined
        for source in sources:
            combined._unhook_sources.append(source.add_callback(combined._fire))
        return combined

    @staticmethod
    def aborted_with(reason: Any = "aborted") -> AbortSignal:
        signal = AbortSignal()
        signal._fire(reason)
        return signal


class AbortController:
    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: Any = "aborted") -> None:
        self.signal._fire(reason)

    @property
    def aborted(self) -> bool:
        return self.signal.aborted


def _noop() -> None:
    return None


def _safe_call(callback: Callable[[Any], None], reason: Any) -> None:
    try:
        callback(reason)
    except Exception:
        log.exception("abort callback failed")
