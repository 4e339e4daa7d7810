"""A provider's SDK imported in a background thread from the moment its model is known.

The launcher starts it before the front end is even imported when the first message is
already given (``picode "prompt"``): that message waits for nothing else as long as for
the SDK, so the SDK is what starts first. The import takes the interpreter lock in turns
with the main thread; nothing here runs on an event loop."""

from __future__ import annotations

import importlib
import logging
import threading

log = logging.getLogger(__name__)

#: Imports started, by wire API (one thread each, for the life of the process).
_started: dict[str, threading.Thread] = {}


def preload_provider(api: str) -> threading.Thread | None:
    """Start importing the provider module serving ``api`` (and so its SDK) in a daemon
    thread; None when that import was started already. An API with no built-in provider
    gets a thread that does nothing. A failure is left for the first request to report."""
    if api in _started:
        return None
    thread = threading.Thread(target=_import, args=(api,), name=f"preload {api}", daemon=True)
    _started[api] = thread
    thread.start()
    return thread


def _import(api: str) -> None:
    try:
        from picode.ai.stream import provider_module

        module = provider_module(api)
        if module is not None:
            importlib.import_module(module)
    except Exception:
        log.debug("preloading the provider for %s failed", api, exc_info=True)
