"""Start-up work after the first frame: the provider SDK imported in the background so the
first request does not wait, and long-lived objects kept out of the garbage collector's way."""

from __future__ import annotations

import gc
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
            return
        freeze_long_lived_objects()  # the SDK's modules: the largest set after start-up


def freeze_long_lived_objects() -> None:
    """Modules, styles, the SDK and a resumed history live as long as the app: out of the
    collector's generations, a full collection mid-reply (80-150 ms with them) walks only
    what is new. Freezing stops nothing being freed by reference counting."""
    gc.freeze()
