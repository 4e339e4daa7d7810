"""SDK clients reused per event loop.

Building an SDK client costs tens of milliseconds (it loads the CA bundle into a fresh SSL
context) on the event-loop thread, and a fresh client also throws away pooled connections,
so every turn would pay a new TLS handshake. Clients are therefore kept per running loop and
per settings; their connection pools are bound to that loop, so they are never shared across
loops. Aborting a request cancels its task, which closes that request's connection only.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")

#: Enough for a handful of providers and keys; the oldest client is dropped beyond it.
MAX_CLIENTS_PER_LOOP = 8

_Entry = tuple[Any, Callable[[Any], Awaitable[None]]]
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Hashable, _Entry]] = (
    weakref.WeakKeyDictionary()
)


def cached_client(
    key: Hashable, create: Callable[[], T], close: Callable[[T], Awaitable[None]]
) -> T:
    """The client for ``key`` on the running loop, created on first use."""
    loop = asyncio.get_running_loop()
    per_loop = _clients.get(loop)
    if per_loop is None:
        per_loop = _clients[loop] = {}
    entry = per_loop.get(key)
    if entry is not None:
        client: T = entry[0]
        return client
    if len(per_loop) >= MAX_CLIENTS_PER_LOOP:
        # Dropped, not closed: a request may still be streaming on it, and closing the
        # client would close that connection too. Its pool goes with the last reference.
        del per_loop[next(iter(per_loop))]
    client = create()
    per_loop[key] = (client, close)
    return client


async def cached_client_async(
    key: Hashable, create: Callable[[], T], close: Callable[[T], Awaitable[None]]
) -> T:
    """Like ``cached_client``, but a new client is built in a worker thread.

    Loading CA certificates takes 100-250 ms on a slow disk (some SDKs build two SSL
    contexts); on the loop thread that would freeze the UI at the first request. A caller
    that comes while the same client is being built waits for that build instead of
    starting a second one: the first request after launch usually comes while
    ``prepare_provider`` is still building, and two builds cost twice the CPU (the CA
    bundle, the SDK's client) and then the closing of the one thrown away.
    """
    loop = asyncio.get_running_loop()
    per_loop = _clients.get(loop)
    entry = per_loop.get(key) if per_loop is not None else None
    if entry is not None:
        client: T = entry[0]
        return client
    building = _building.get(loop)
    if building is None:
        building = _building[loop] = {}
    task = building.get(key)
    if task is None:
        task = loop.create_task(_build(key, create, close, building))
        # Retrieved here so that a build whose callers were all cancelled, and which then
        # failed, is not reported as an exception nobody read.
        task.add_done_callback(lambda done: done.cancelled() or done.exception())
        building[key] = task
    # Shielded: a caller cancelled (an aborted request) leaves the build to the others.
    built: T = await asyncio.shield(task)
    return built


#: Builds under way, per loop and settings: the task every caller for that client awaits.
_building: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[Hashable, asyncio.Task[Any]]
] = weakref.WeakKeyDictionary()


async def _build(
    key: Hashable,
    create: Callable[[], T],
    close: Callable[[T], Awaitable[None]],
    building: dict[Hashable, asyncio.Task[Any]],
) -> T:
    try:
        built = await asyncio.to_thread(create)
        return cached_client(key, lambda: built, close)
    finally:
        building.pop(key, None)


async def close_clients() -> None:
    """Close every client made on the running loop (tests and shutdown)."""
    per_loop = _clients.pop(asyncio.get_running_loop(), None)
    for client, close in (per_loop or {}).values():
        await _close_quietly(client, close)


async def _close_quietly(client: Any, close: Callable[[Any], Awaitable[None]]) -> None:
    try:
        await close(client)
    except Exception:  # closing an idle pool must never fail the caller
        pass
