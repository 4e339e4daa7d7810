"""Clients built in a worker thread and shared per loop: one build however many callers
come while it is under way (the first request usually comes while ``prepare_provider``
is still building)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from picode.ai.providers import _client_cache
from picode.ai.providers._client_cache import cached_client_async, close_clients


class FakeClient:
    closed = False


class FakeBuilds:
    """``create`` for the cache: each build blocks in its worker thread until released."""

    def __init__(self) -> None:
        self.count = 0
        self.release = threading.Event()
        self.started = threading.Event()
        self.fail = False

    def create(self) -> FakeClient:
        self.count += 1
        self.started.set()
        if not self.release.wait(10):
            raise TimeoutError("the test never released the build")
        if self.fail:
            raise OSError("no CA bundle")
        return FakeClient()


async def _close(client: FakeClient) -> None:
    client.closed = True


async def _started(builds: FakeBuilds) -> None:
    await asyncio.to_thread(builds.started.wait, 10)


def test_callers_during_a_build_share_it() -> None:
    builds = FakeBuilds()

    async def scenario() -> None:
        try:
            first = asyncio.create_task(cached_client_async("k", builds.create, _close))
            await _started(builds)
            second = asyncio.create_task(cached_client_async("k", builds.create, _close))
            await asyncio.sleep(0)
            builds.release.set()
            clients = await asyncio.gather(first, second)
            assert clients[0] is clients[1]
            assert await cached_client_async("k", builds.create, _close) is clients[0]
            assert builds.count == 1
        finally:
            await close_clients()

    asyncio.run(scenario())


def test_a_cancelled_caller_leaves_the_build_to_the_others() -> None:
    builds = FakeBuilds()

    async def scenario() -> None:
        try:
            first = asyncio.create_task(cached_client_async("k", builds.create, _close))
            await _started(builds)
            second = asyncio.create_task(cached_client_async("k", builds.create, _close))
            await asyncio.sleep(0)
            first.cancel()
            builds.release.set()
            client = await second
            assert isinstance(client, FakeClient) and not client.closed
            assert first.cancelled()
            assert builds.count == 1
        finally:
            await close_clients()

    asyncio.run(scenario())


def test_a_failed_build_fails_every_caller_and_the_next_call_builds_again() -> None:
    builds = FakeBuilds()
    builds.fail = True

    async def scenario() -> None:
        try:
            first = asyncio.create_task(cached_client_async("k", builds.create, _close))
            await _started(builds)
            second = asyncio.create_task(cached_client_async("k", builds.create, _close))
            await asyncio.sleep(0)
            builds.release.set()
            for caller in (first, second):
                with pytest.raises(OSError):
                    await caller
            assert builds.count == 1
            builds.fail = False
            assert isinstance(await cached_client_async("k", builds.create, _close), FakeClient)
            assert builds.count == 2
            assert not _client_cache._building.get(asyncio.get_running_loop())
        finally:
            await close_clients()

    asyncio.run(scenario())
