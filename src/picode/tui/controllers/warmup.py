"""Import the model's provider SDK in the background so the first request does not wait."""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


async def warm_provider(api: str) -> None:
    from picode.ai.builder import import_provider
    from picode.ai.stream import provider_module

    module = provider_module(api)
    if module is not None:
        try:
            await import_provider(module)
        except Exception:  # the first request reports it properly
            log.debug("warming %s failed", module, exc_info=True)
