"""The beat a streaming reply's flushes and the spinner's ticks share (pacing.py), and
Textual's callbacks counted once per bound method (callbacks.py)."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from functools import partial
from types import SimpleNamespace
from typing import Any

import pytest
from textual import _callback
from textual._callback import count_parameters

from picode.tui.callbacks import count_bound_methods_once, counting_bound_methods_once
from picode.tui.widgets import markdown as markdown_module
from picode.tui.widgets import status as status_module
from picode.tui.widgets.markdown import StreamingMarkdown
from picode.tui.widgets.pacing import (
    FRAME_S,
    TICK_POINTS,
    TICK_S,
    Beat,
    Due,
    next_tick_point,
    point_at_or_after,
    tick_count,
)
from picode.tui.widgets.status import SPINNER, StatusLine
from tests.support import FakeClock, run
from tests.tui.beat import RecordedBeat
from tests.tui.hosts import TokensHost

# --- the grid -----------------------------------------------------------------------------


def test_points_and_ticks_are_on_one_grid() -> None:
    for point in (1, 2, 3, 1000, 123_457):
        assert point_at_or_after(point * FRAME_S) == point
        assert point_at_or_after(point * FRAME_S + FRAME_S / 3) == point + 1
    for now in (0.0, 5.01, 12.37, 86_400.449):
        tick = next_tick_point(now)
        assert tick % TICK_POINTS == 0
        due = tick * FRAME_S
        assert 0 < due - now <= 1.5 * TICK_S
        # Read a little early or late at its point, the count is the tick's own.
        assert tick_count(due - 0.001) == tick_count(due + 0.001) == tick // TICK_POINTS
        assert tick_count(due - 0.001) == tick_count(now) + 1


class FakeLoop:
    """Records what ``call_at`` was asked for; ``fire`` runs one of them."""

    def __init__(self) -> None:
        self.calls: list[tuple[float, Callable[..., object], tuple[Any, ...]]] = []

    def call_at(self, when: float, callback: Callable[..., object], *args: Any) -> None:
        self.calls.append((when, callback, args))

    def fire(self, index: int) -> None:
        _when, callback, args = self.calls[index]
        callback(*args)


def test_callbacks_due_at_one_point_run_from_one_loop_callback() -> None:
    loop = FakeLoop()
    beat = Beat(loop)  # type: ignore[arg-type]
    ran: list[str] = []
    beat.at(40, lambda: ran.append("flush"))
    cancelled = beat.at(40, lambda: ran.append("cancelled"))
    beat.at(40, lambda: ran.append("tick"))
    beat.at(41, lambda: ran.append("later"))
    cancelled.cancel()
    assert [(when, args) for when, _callback, args in loop.calls] == [
        (40 * FRAME_S, (40,)),
        (41 * FRAME_S, (41,)),
    ]
    loop.fire(0)
    assert ran == ["flush", "tick"]
    loop.fire(0)  # nothing is run twice
    assert ran == ["flush", "tick"]
    loop.fire(1)
    assert ran == ["flush", "tick", "later"]


def test_a_due_callback_runs_in_the_context_it_was_asked_from() -> None:
    where: contextvars.ContextVar[str] = contextvars.ContextVar("where", default="loop")
    loop = FakeLoop()
    beat = Beat(loop)  # type: ignore[arg-type]
    seen: list[str] = []

    def ask(name: str) -> Due:
        where.set(name)
        return beat.at(7, lambda: seen.append(where.get()))

    contextvars.copy_context().run(ask, "markdown")
    contextvars.copy_context().run(ask, "status")
    loop.fire(0)
    assert seen == ["markdown", "status"]


# --- the spinner ---------------------------------------------------------------------------


def test_the_spinner_starts_at_its_first_frame_and_moves_once_a_tick() -> None:
    clock = FakeClock(now=1000.0)
    status = StatusLine(clock=clock)
    status.start_working()
    assert status.render().plain.startswith(SPINNER[0])
    first_tick = next_tick_point(clock.now) * FRAME_S
    for ticks in range(12):
        clock.now = first_tick + ticks * TICK_S - 0.002  # a timer a little early
        assert status.render().plain.startswith(SPINNER[(ticks + 1) % len(SPINNER)])
        clock.now += 0.004  # or a little late
        assert status.render().plain.startswith(SPINNER[(ticks + 1) % len(SPINNER)])


@pytest.fixture
def beat(monkeypatch: pytest.MonkeyPatch) -> RecordedBeat:
    recorded = RecordedBeat()
    monkeypatch.setattr(status_module, "on_beat", recorded)
    monkeypatch.setattr(markdown_module, "on_beat", recorded)
    return recorded


async def until(predicate: Callable[[], bool], pilot: Any, what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5
    while not predicate():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.01)


def test_a_tick_and_a_flush_due_together_are_drawn_in_one_frame(beat: RecordedBeat) -> None:
    status = StatusLine()
    markdown = StreamingMarkdown()
    app = TokensHost(markdown, status)
    frames: list[str] = []

    async def scenario() -> None:
        async with app.run_test(size=(60, 10)) as pilot:
            screen = app.screen
            paint = screen._compositor_refresh

            def counted() -> None:
                paint()
                frames.append(markdown.source)

            screen._compositor_refresh = counted  # type: ignore[method-assign]
            status.start_working()
            assert all(point % TICK_POINTS == 0 for point in beat.points())
            markdown.feed("First words")  # the reply's first text: shown at once
            await until(lambda: len(beat.points()) == 2, pilot, "the next flush timed")
            posted: list[object] = []
            post = markdown.post_message

            def posting(message: Any) -> bool:
                posted.append(message)
                return post(message)

            markdown.post_message = posting  # type: ignore[method-assign]
            for word in (" more", " words", " still"):
                markdown.feed(word)
            assert posted == [], "a flush is timed: no message per fragment"
            assert markdown.source == "First words"
            await pilot.pause()
            before = len(frames)
            assert beat.fire() == 2  # the spinner's tick and the flush
            await until(lambda: len(frames) > before, pilot, "the frame")
            await pilot.pause()
            assert frames[before:] == ["First words more words still"]
            # Both on the beat again: the next tick, and the next flush (nothing to show).
            assert len(beat.points()) == 2

    run(scenario())


def test_text_faster_than_anyone_reads_is_flushed_with_the_spinner_only(
    beat: RecordedBeat, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FakeClock(now=1000.0)
    monkeypatch.setattr(markdown_module, "time", SimpleNamespace(monotonic=clock))
    markdown = StreamingMarkdown()
    app = TokensHost(markdown)
    # Half as fast again as the threshold, and a quarter of it, in a frame.
    fast = "x" * int(markdown_module.FAST_TEXT_PER_S * FRAME_S * 1.5)
    slow = "y" * int(markdown_module.FAST_TEXT_PER_S * FRAME_S / 4)

    async def flush_on_the_beat(text: str, pilot: Any) -> int:
        """Feed ``text`` at the point the next flush waits for; the point after it."""
        (point,) = beat.points()
        clock.now = point * FRAME_S
        markdown.feed(text)
        assert beat.fire() == 1
        await until(lambda: len(beat.points()) == 1, pilot, "the next flush timed")
        return beat.points()[0] - point

    async def scenario() -> None:
        async with app.run_test(size=(60, 10)) as pilot:
            markdown.feed("First words")  # at once
            await until(lambda: len(beat.points()) == 1, pilot, "the next flush timed")
            # Fast text: the next flush waits for the point after next, one the spinner
            # ticks on, as long as the text keeps coming that fast.
            steps = [await flush_on_the_beat(fast, pilot)]  # in the frame after the first
            for _ in range(3):
                steps.append(await flush_on_the_beat(fast * 2, pilot))
            assert all(step >= TICK_POINTS for step in steps), steps
            assert beat.points()[0] % TICK_POINTS == 0
            # Slower text is flushed on every point again.
            assert await flush_on_the_beat(slow, pilot) == 1
            assert await flush_on_the_beat(slow, pilot) == 1
            assert markdown.source == "First words" + fast * 7 + slow * 2
            assert all(step >= TICK_POINTS for step in steps), steps

    run(scenario())


# --- callbacks -----------------------------------------------------------------------------


class Counted:
    def two(self, first: int, second: int) -> None: ...

    def none(self) -> None: ...


def test_a_bound_method_is_counted_once_for_every_instance() -> None:
    asked: list[object] = []

    def count(func: Callable[..., Any]) -> int:
        asked.append(func)
        return _callback._count_parameters(func)

    counted = counting_bound_methods_once(count)
    results = [counted(Counted().two) for _ in range(3)] + [counted(Counted().none)]
    assert results == [2, 2, 2, 0]
    assert len(asked) == 2  # once per function

    def plain(a: int) -> None: ...

    assert [counted(plain), counted(plain)] == [1, 1]
    assert len(asked) == 4  # anything else as before


def test_textual_passes_what_it_passed_before_once_installed() -> None:
    count_bound_methods_once()
    count_bound_methods_once()  # once
    assert hasattr(_callback._count_parameters, "__wrapped__")
    assert not hasattr(_callback._count_parameters.__wrapped__, "__wrapped__")
    target = Counted()
    # Textual wraps scheduled callbacks in a partial each time.
    assert count_parameters(partial(target.two, 1)) == 1
    assert count_parameters(partial(target.two)) == 2
    assert count_parameters(partial(target.none)) == 0
    assert count_parameters(partial(target.two, 1)) == 1


def test_a_textual_without_the_counting_function_is_left_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delattr(_callback, "_count_parameters")
    count_bound_methods_once()  # nothing to wrap: no error, nothing added
    assert not hasattr(_callback, "_count_parameters")
