"""A provider whose module is still being imported by a warm-up thread must not be used
half-built: the request waits for the import instead of failing."""

from __future__ import annotations

import asyncio
import importlib
import sys
import threading
import time

from picode.ai.builder import import_provider
from tests.fake_modules import SLOW_IMPORT_GATE

MODULE = "tests.fake_modules.slow_provider"


def test_import_provider_waits_for_an_import_in_progress() -> None:
    sys.modules.pop(MODULE, None)
    SLOW_IMPORT_GATE.clear()
    warm = threading.Thread(target=importlib.import_module, args=(MODULE,))
    warm.start()
    deadline = time.monotonic() + 5
    while MODULE not in sys.modules and time.monotonic() < deadline:
        time.sleep(0.001)
    assert MODULE in sys.modules, "the warm-up import never started"

    async def scenario() -> object:
        waiter = asyncio.ensure_future(import_provider(MODULE))
        await asyncio.sleep(0.05)
        assert not waiter.done()  # still waiting for the warm-up thread's import
        SLOW_IMPORT_GATE.set()
        return await asyncio.wait_for(waiter, 5)

    try:
        module = asyncio.run(scenario())
    finally:
        SLOW_IMPORT_GATE.set()
        warm.join(5)
    assert callable(getattr(module, "produce", None))
