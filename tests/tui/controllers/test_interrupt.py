"""Esc's chain on its own: the newest open popup first, else the run, else nothing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from picode.tui.controllers.interrupt import REWIND_HINT, InterruptController
from tests.support import FakeClock

if TYPE_CHECKING:
    from picode.tui.controllers.interrupt import Popup


@dataclass
class FakePopup:
    open: bool = False
    closed: int = 0

    def is_open(self) -> bool:
        return self.open

    def close(self) -> bool:
        was_open, self.open = self.open, False
        self.closed += was_open
        return was_open


@dataclass
class FakeSession:
    is_running: bool = False
    retry_pending: bool = False
    queued: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)

    def clear_queues(self) -> list[str]:
        self.calls.append("clear_queues")
        queued, self.queued = self.queued, []
        return queued

    def abort(self) -> None:
        self.calls.append("abort")
        self.is_running = self.retry_pending = False


@dataclass
class FakeEditor:
    texts: list[str] = field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return not self.texts

    def insert_before(self, texts: list[str]) -> None:
        self.texts[:0] = texts


@dataclass
class FakeInterruptHost:
    """The app as Esc sees it (its ``InterruptHost``)."""

    session: FakeSession | None = field(default_factory=FakeSession)
    editor: FakeEditor = field(default_factory=FakeEditor)
    built: list[FakePopup] = field(default_factory=list)
    marked: int = 0
    rewinds: int = 0
    status: FakeStatus = field(default_factory=lambda: FakeStatus())
    timers: list[Callable[[], None]] = field(default_factory=list)

    def popups(self) -> list[Popup]:
        return list(self.built)

    def mark_interrupted(self) -> None:
        self.marked += 1

    def open_rewind(self) -> None:
        self.rewinds += 1

    def set_timer(self, delay: float, callback: Callable[[], None]) -> object:
        self.timers.append(callback)
        return None


@dataclass
class FakeStatus:
    notice: tuple[str, str] | None = None

    def set_notice(self, text: str | None) -> None:
        self.notice = (text, "info") if text else None


def test_esc_closes_the_newest_open_popup_before_it_interrupts() -> None:
    lower, upper = FakePopup(open=True), FakePopup(open=True)
    host = FakeInterruptHost(session=FakeSession(is_running=True), built=[lower, upper])
    interrupts = InterruptController(host)
    assert interrupts.handle()
    assert (lower.closed, upper.closed) == (0, 1)
    assert interrupts.handle()
    assert lower.closed == 1
    assert host.session is not None and host.session.calls == []
    assert interrupts.handle()  # no popup left: the run stops
    assert host.session.calls == ["clear_queues", "abort"]
    assert host.marked == 1


def test_an_interrupted_run_gives_its_queue_back_to_the_editor() -> None:
    session = FakeSession(is_running=True, queued=["steer", "follow"])
    host = FakeInterruptHost(session=session, editor=FakeEditor(["typed"]))
    assert InterruptController(host).abort_run()
    assert host.editor.texts == ["steer", "follow", "typed"]
    assert session.calls == ["clear_queues", "abort"]  # taken back before the abort


def test_esc_passes_through_with_nothing_open_nothing_running_and_text_typed() -> None:
    for session in (None, FakeSession()):
        host = FakeInterruptHost(session=session, editor=FakeEditor(["typed"]), built=[FakePopup()])
        interrupts = InterruptController(host)
        assert not interrupts.can_handle()
        assert not interrupts.handle()
        assert host.marked == 0
    retrying = FakeInterruptHost(session=FakeSession(retry_pending=True))
    assert InterruptController(retrying).can_handle()


def test_esc_twice_on_an_empty_editor_opens_rewind() -> None:
    clock = FakeClock()
    host = FakeInterruptHost()
    interrupts = InterruptController(host, clock=clock)
    assert interrupts.can_handle()
    assert interrupts.handle()
    assert host.rewinds == 0 and host.status.notice == (REWIND_HINT, "info")
    clock.advance(0.5)
    assert interrupts.handle()
    assert host.rewinds == 1 and host.status.notice is None
    # Too slow: the first press only says what a second one would do, and the hint goes.
    assert interrupts.handle()
    clock.advance(2)
    host.timers[-1]()
    assert host.status.notice is None
    assert interrupts.handle()
    assert host.rewinds == 1
    # A press that stopped a run does not count toward a rewind.
    host.session = FakeSession(is_running=True)
    assert interrupts.handle() and host.session.calls == ["clear_queues", "abort"]
    assert interrupts.handle()
    assert host.rewinds == 1
