"""A provider module whose import lasts until the test lets it finish (``SLOW_IMPORT_GATE``),
as a slow SDK import does on a loaded machine."""

from __future__ import annotations

from picode.ai.builder import MessageBuilder
from tests.fake_modules import SLOW_IMPORT_GATE

if not SLOW_IMPORT_GATE.wait(30):
    raise RuntimeError("the test never let the slow import finish")


async def produce(model: object, context: object, options: object, out: MessageBuilder) -> None:
    index = out.text_start()
    out.text_delta(index, "slow module answered")
    out.finish("stop")
