"""Modules the tests name where picode expects a provider module or an SDK: picode imports
them by name, as it does the real ones, so when (and whether) they are imported is what the
tests watch."""

from __future__ import annotations

import threading

#: Holds ``slow_provider``'s import until a test sets it. It lives here, not in that module,
#: so that it outlasts each fresh import of it.
SLOW_IMPORT_GATE = threading.Event()
