"""One module per wire API, each exposing ``async def produce(model, context, options, out)``.

They are imported on first use only (see ``picode.ai.stream.PROVIDER_MODULES``).
"""
