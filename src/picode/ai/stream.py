"""``stream_simple``: one entry point for every wire API, dispatched by ``model.api``.

Provider modules are named here, not imported: the first request for an API imports its
module (and so its SDK) in a worker thread, keeping start-up and the event loop quick.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from picode.ai.builder import Produce, import_provider, run_provider
from picode.ai.models import Model
from picode.ai.options import StreamOptions

if TYPE_CHECKING:
    from picode.ai.event_stream import AssistantMessageEventStream
    from picode.ai.types import Context

PROVIDER_MODULES: dict[str, str] = {
    "anthropic-messages": "picode.ai.providers.anthropic_messages",
    "openai-responses": "picode.ai.providers.openai_responses",
    "openai-completions": "picode.ai.providers.openai_completions",
    "google-generative-ai": "picode.ai.providers.google_generative_ai",
}

_registered: dict[str, Produce] = {}


def register_api(api: str, produce: Produce) -> None:
    """Serve ``api`` with ``produce`` (used by the scripted test provider and extensions)."""
    _registered[api] = produce


def unregister_api(api: str) -> None:
    _registered.pop(api, None)


def known_apis() -> list[str]:
    return sorted({*PROVIDER_MODULES, *_registered})


def stream_simple(
    model: Model, context: Context, options: StreamOptions | None = None
) -> AssistantMessageEventStream:
    """Start streaming one assistant message; must be called with a running event loop."""
    options = options or StreamOptions()
    produce: Produce | str | None = _registered.get(model.api) or PROVIDER_MODULES.get(model.api)
    if produce is None:
        raise ValueError(f"No provider for API '{model.api}'. Known APIs: {known_apis()}")
    return run_provider(produce, model, context, options)


def provider_module(api: str) -> str | None:
    """The module that serves ``api``, for warming its import in the background."""
    return PROVIDER_MODULES.get(api)


async def prepare_provider(model: Model, options: StreamOptions) -> None:
    """Import ``model``'s provider (and so its SDK) and build its HTTP client now, off the
    event loop, so the first request starts at once. Does nothing for APIs served by a
    registered function. A failure here (a missing key, a broken SDK) is left for that
    request to report."""
    if model.api in _registered:
        return
    module_name = PROVIDER_MODULES.get(model.api)
    if module_name is None:
        return
    module = await import_provider(module_name)
    prepare = getattr(module, "prepare", None)
    if prepare is not None:
        await prepare(model, options)
