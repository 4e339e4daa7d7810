"""Garbage frozen along with start-up's objects is collected once a run has ended."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from picode.ai.providers.faux import FauxText, FauxTurn, text_turn
from picode.tui import gc_pause
from picode.tui.controllers import router
from tests.tui.conftest import SIZE, TuiHarness, opened, run, send, wait_until


class FakeCycle:
    """Garbage only the cyclic collector can free: it refers to itself."""

    def __init__(self) -> None:
        self.me = self


def frozen_garbage() -> weakref.ref[FakeCycle]:
    """A cycle nothing refers to, frozen the way start-up freezes (``gc_pause.freeze``)."""
    was_enabled = gc.isenabled()
    gc.disable()  # no collection between making the garbage and freezing it
    try:
        ref = weakref.ref(FakeCycle())
        gc_pause.freeze()
    finally:
        if was_enabled:
            gc.enable()
    return ref


@pytest.fixture(autouse=True)
def unfrozen() -> Iterator[None]:
    gc_pause.sweep_frozen_garbage()  # nothing left from another test's freeze
    gc.unfreeze()
    yield
    gc_pause.sweep_frozen_garbage()
    gc.unfreeze()


def test_a_sweep_collects_what_a_freeze_took_along_and_freezes_again() -> None:
    ref = frozen_garbage()
    gc.collect()
    assert ref() is not None  # frozen: out of the collector's reach
    gc_pause.sweep_frozen_garbage()
    assert ref() is None
    assert gc.get_freeze_count() > 0  # what lives is frozen again


def test_without_a_freeze_since_the_last_sweep_a_sweep_does_nothing() -> None:
    gc_pause.sweep_frozen_garbage()
    gc.disable()
    try:
        ref = weakref.ref(FakeCycle())
        gc.freeze()  # not through gc_pause: no sweep is owed
    finally:
        gc.enable()
    gc_pause.sweep_frozen_garbage()
    assert ref() is not None


def test_a_chore_waits_for_the_sweep_and_runs_once() -> None:
    done: list[str] = []
    gc_pause.when_settled(lambda: done.append("saved"))
    assert gc_pause.sweep_owed() and done == []
    gc_pause.sweep_frozen_garbage()
    gc_pause.sweep_frozen_garbage()
    assert done == ["saved"]
    assert not gc_pause.sweep_owed()


def test_the_garbage_frozen_before_a_reply_is_collected_a_moment_after_it_is_shown(
    tui: TuiHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(router, "SWEEP_AFTER_S", 0.3)
    faux = tui.faux(text_turn("answer"))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await pilot.pause()
            ref = frozen_garbage()
            await pilot.pause()
            assert ref() is not None
            await send(pilot, "hello")
            await wait_until(pilot, lambda: not app.status.is_working, what="the reply")
            assert ref() is not None  # not as the reply lands: a key may follow at once
            await wait_until(pilot, lambda: ref() is None, what="the sweep after the reply")

    run(scenario())


def test_no_sweep_while_a_run_is_under_way(
    tui: TuiHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full collection mid-reply would stall its stream: the next run's end sweeps."""
    monkeypatch.setattr(router, "SWEEP_AFTER_S", 0.6)
    faux = tui.faux(
        text_turn("first"), FauxTurn([FauxText("second " * 40)], chunk_size=4, delay=0.02)
    )
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await pilot.pause()
            ref = frozen_garbage()
            await send(pilot, "one")
            await wait_until(pilot, lambda: not app.status.is_working, what="the first reply")
            await send(pilot, "two")  # the second run starts before the sweep is due
            await wait_until(pilot, lambda: app.status.is_working, what="the second run")
            await wait_until(pilot, lambda: not app.status.is_working, what="the second reply")
            # The first run's timer fired during the second (~1.4 s) and left the sweep owed.
            assert ref() is not None and gc_pause.sweep_owed()
            await wait_until(pilot, lambda: ref() is None, what="the sweep after the second")

    run(scenario())
