"""The cyclic garbage collector paused while the app starts.

Start-up builds about 250,000 objects that live as long as the app (Textual, the provider
SDK, pydantic's schemas) and almost no cyclic garbage (about 1,700 objects with Textual and
the Anthropic SDK): the collector's passes over them were 10-15 % of start-up's CPU time,
on the path to the first frame and to the first request. It resumes once the session is
open and the SDK imported; what start-up built is frozen then (``gc.freeze``), so later
full collections do not walk it again. Imports nothing: it runs before Textual loads."""

from __future__ import annotations

import gc

#: The longest the collector stays paused: a person may sit in the trust question or the
#: session picker before the session opens, and the screens they use make garbage.
PAUSE_LIMIT_S = 5.0

_paused = False


def pause_collector() -> None:
    """Pause the collector (when it runs) until ``resume_collector``."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume_collector() -> None:
    """Freeze what start-up built and let the collector run again, if it was paused here."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
