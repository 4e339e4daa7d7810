"""The cyclic garbage collector paused while the app starts.

Start-up builds about 250,000 objects that live as long as the app (Textual, the provider
SDK, pydantic's schemas) and almost no cyclic garbage (about 1,700 objects with Textual and
the Anthropic SDK): the collector's passes over them were 10-15 % of start-up's CPU time,
on the path to the first frame and to the first request. It resumes once the session is
open and the SDK imported; what start-up built is frozen then (``gc.freeze``), so later
full collections do not walk it again.

A freeze takes the garbage of the moment with it, and frozen garbage is never collected:
after start-up that was ~60,000 objects and ~2.5 MB of RSS (Textual's first frames,
pydantic's schema work). So after a freeze, a moment after the first run ends with nothing
running (the TUI's router), one full collection goes over everything and freezes again:
one pass (70-140 ms) where nothing waits for it, not on the way to the first frame, the
first request or a key typed as the reply lands. Other start-up chores that should wait
for that moment (``when_settled``) run with it. Imports nothing: it runs before Textual
loads."""

from __future__ import annotations

import gc
from collections.abc import Callable

#: The longest the collector stays paused: a person may sit in the trust question or the
#: session picker before the session opens, and the screens they use make garbage.
PAUSE_LIMIT_S = 5.0

_paused = False
#: A freeze happened since the last sweep (``sweep_frozen_garbage``).
_unswept = False
#: Run once at the next sweep's moment (``when_settled``).
_chores: list[Callable[[], None]] = []


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
        freeze()
        gc.enable()


def freeze() -> None:
    """Take every object the collector tracks out of its generations (``gc.freeze``)."""
    global _unswept
    _unswept = True
    gc.freeze()


def when_settled(chore: Callable[[], None]) -> None:
    """Run ``chore`` once, at the next sweep's moment: after a run, with nothing running."""
    _chores.append(chore)


def sweep_owed() -> bool:
    """Has anything been frozen since the last sweep, or does a chore wait for it?"""
    return _unswept or bool(_chores)


def sweep_frozen_garbage() -> None:
    """Run the chores waiting, then collect the garbage frozen since the last sweep, if
    anything was frozen: a full collection over every object, the frozen ones included,
    then freeze again."""
    global _unswept
    while _chores:
        _chores.pop(0)()
    if not _unswept:
        return
    _unswept = False
    gc.unfreeze()
    gc.collect()
    gc.freeze()
