"""A provider module served by name, like the real ones: imported on first use only."""

from __future__ import annotations

from picode.ai.builder import MessageBuilder
from picode.ai.models import Model
from picode.ai.options import StreamOptions
from picode.ai.types import Context


async def produce(
    model: Model, context: Context, options: StreamOptions, out: MessageBuilder
) -> None:
    index = out.text_start()
    out.text_delta(index, f"served by {__name__}")
    out.set_usage(input=7, output=3)
    out.finish("stop")
