"""A provider module whose import takes a while (imported by a test while it is warming)."""

from __future__ import annotations

import threading

from picode.ai.builder import MessageBuilder

#: The test releases the import once a second importer is waiting on it.
release = threading.Event()
release.wait(10)


async def produce(model: object, context: object, options: object, out: MessageBuilder) -> None:
    index = out.text_start()
    out.text_delta(index, "slow module answered")
    out.finish("stop")
