"""Garbage frozen along with start-up's objects is collected once a run has ended."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from picode.ai.providers.faux import text_turn
from picode.tui import gc_pause
from tests.tui.conftest import SIZE, TuiHarness, run, type_text, wait_until


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


def test_the_garbage_frozen_before_a_reply_is_collected_once_it_is_shown(
    tui: TuiHarness,
) -> None:
    faux = tui.faux(text_turn("answer"))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None, what="the session")
            await pilot.pause()
            ref = frozen_garbage()
            await pilot.pause()
            assert ref() is not None
            await type_text(pilot, "hello")
            await pilot.press("enter")
            await wait_until(pilot, lambda: faux.requests, what="the request")
            await wait_until(pilot, lambda: ref() is None, what="the sweep after the reply")
            assert not app.status.is_working

    run(scenario())
