"""One beat for what moves on screen while a reply streams.

The reply's flushes and the spinner's ticks (10 a second) each cost a frame of Textual's (a
layout, the compositor, a write to the terminal). Timed each by a timer of its own they
never met: ~19 flushes and 10 ticks made ~30 frames a second, as Textual draws a refresh as
soon as the event loop is idle. Both are placed on one grid of the monotonic clock instead,
20 points a second, a tick on every other point, and whatever is due at a point runs from
one callback of the event loop: a tick and a flush due together refresh before the same
frame. The reply was shown ~19 times a second before (at most 30, at least 1/30 s apart
and twice the time the last flush took, which on the machine of docs/benchmarks.md gave
19); on the grid it is at most 20, the rate a person saw, the spinner's is unchanged.
"""

from __future__ import annotations

import asyncio
import contextvars
import math
from collections.abc import Callable
from weakref import WeakKeyDictionary

#: The grid: the shortest time between two flushes of a streaming reply.
FRAME_S = 1 / 20
#: Points of the grid between two ticks of the spinner (10 a second).
TICK_POINTS = 2
TICK_S = TICK_POINTS * FRAME_S


def point_at_or_after(time: float) -> int:
    """The first point of the grid at or after ``time`` (monotonic seconds)."""
    # A hair under: a time computed from a point may read a rounding error above it.
    return math.ceil(time / FRAME_S - 1e-6)


def tick_count(now: float) -> int:
    """Ticks of the spinner since the clock's zero, changing midway between two ticks: at
    a tick (a little early or late) it reads that tick's count."""
    return round(now / TICK_S)


def next_tick_point(now: float) -> int:
    """The point of the tick after the one ``now`` belongs to."""
    return (tick_count(now) + 1) * TICK_POINTS


class Due:
    """A callback waiting for its point; ``cancel`` drops it."""

    __slots__ = ("callback", "context")

    def __init__(self, callback: Callable[[], object]) -> None:
        self.callback: Callable[[], object] | None = callback
        # Run as it would have been from where it was asked for (Textual's active app and
        # message pump are context variables).
        self.context = contextvars.copy_context()

    def cancel(self) -> None:
        self.callback = None


class Beat:
    """Callbacks due at points of the grid, those of one point run together."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._waiting: dict[int, list[Due]] = {}

    def at(self, point: int, callback: Callable[[], object]) -> Due:
        due = Due(callback)
        waiting = self._waiting.get(point)
        if waiting is None:
            self._waiting[point] = [due]
            # The event loop's clock is the monotonic clock the points are counted on.
            self._loop.call_at(point * FRAME_S, self._fire, point)
        else:
            waiting.append(due)
        return due

    def _fire(self, point: int) -> None:
        for due in self._waiting.pop(point, ()):
            callback = due.callback
            if callback is not None:
                due.callback = None
                due.context.run(callback)


_beats: WeakKeyDictionary[asyncio.AbstractEventLoop, Beat] = WeakKeyDictionary()


def on_beat(point: int, callback: Callable[[], object]) -> Due:
    """Run ``callback`` at ``point`` of the grid, with anything else due then."""
    loop = asyncio.get_running_loop()
    beat = _beats.get(loop)
    if beat is None:
        beat = _beats[loop] = Beat(loop)
    return beat.at(point, callback)
