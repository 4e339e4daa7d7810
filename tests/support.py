"""The few helpers every kind of test needs, once: run a body with a deadline, wait for a
condition with one, and a clock that moves only when told."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")


def run(body: Awaitable[T] | Callable[[], Awaitable[T]], timeout: float = 30.0) -> T:
    """Run an async test body (a coroutine, or a function making one) on a fresh loop; a
    hang fails the test after ``timeout`` seconds instead of stalling the suite."""

    async def bounded() -> T:
        awaitable = body if inspect.isawaitable(body) else body()
        return await asyncio.wait_for(awaitable, timeout)

    return asyncio.run(bounded())


async def wait_until(predicate: Callable[[], object], timeout: float = 5.0, what: str = "") -> None:
    """Poll the running loop until ``predicate()`` holds; fail after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await asyncio.sleep(0.005)


def poll_until(
    predicate: Callable[[], object], timeout: float, what: str = "", interval: float = 0.02
) -> None:
    """``wait_until`` outside an event loop: another process or thread does the work."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        time.sleep(interval)


async def pump_until(
    pilot: Any, predicate: Callable[[], object], timeout: float = 5.0, what: str = ""
) -> None:
    """``wait_until`` for a Textual app: let ``pilot`` pump the app between checks."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await pilot.pause(0.01)


class FakeClock:
    """A monotonic clock that moves only when told (pinned spinners, countdowns, backoff)."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
