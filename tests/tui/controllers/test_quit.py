"""Ctrl+C's ladder on its own: copy, clear, interrupt, then quit on a second press."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from picode.tui.controllers.quit import DOUBLE_PRESS_S, QuitController


@dataclass
class FakeEditor:
    text: str = ""

    @property
    def is_empty(self) -> bool:
        return not self.text

    def reset(self) -> None:
        self.text = ""


@dataclass
class FakeInterrupts:
    busy: bool = False
    aborted: int = 0

    def is_busy(self) -> bool:
        return self.busy

    def abort_run(self) -> bool:
        if not self.busy:
            return False
        self.busy = False
        self.aborted += 1
        return True


@dataclass
class FakeStatus:
    notice: tuple[str, str] | None = None

    def set_notice(self, text: str | None) -> None:
        self.notice = (text, "info") if text else None


@dataclass
class FakeQuitHost:
    """The app as the quit controller sees it (its ``QuitHost``)."""

    now: float = 100.0
    editor: FakeEditor = field(default_factory=FakeEditor)
    interrupts: FakeInterrupts = field(default_factory=FakeInterrupts)
    status: FakeStatus = field(default_factory=FakeStatus)
    selection: str = ""
    copied: list[str] = field(default_factory=list)
    timers: list[Callable[[], None]] = field(default_factory=list)
    quits: int = 0

    def set_timer(self, delay: float, callback: Callable[[], None]) -> None:
        self.timers.append(callback)

    def selected_text(self) -> str:
        return self.selection

    def action_copy_selection(self) -> None:
        self.copied.append(self.selection)

    def quit_soon(self) -> None:
        self.quits += 1

    def controller(self) -> QuitController:
        return QuitController(self, clock=lambda: self.now)


def test_a_selection_is_copied_and_nothing_else_happens() -> None:
    rig = FakeQuitHost(selection="some text", editor=FakeEditor("draft"))
    rig.controller().clear_or_quit()
    assert rig.copied == ["some text"]
    assert rig.editor.text == "draft"
    assert rig.quits == 0


def test_clear_then_quit_within_the_double_press_time() -> None:
    rig = FakeQuitHost(editor=FakeEditor("draft"))
    quitter = rig.controller()
    quitter.clear_or_quit()
    assert rig.editor.is_empty
    assert rig.status.notice == ("Press ctrl+c again to quit", "info")
    rig.now += DOUBLE_PRESS_S / 2
    quitter.clear_or_quit()
    assert rig.quits == 1


def test_a_second_press_after_the_time_arms_again_and_the_notice_goes() -> None:
    rig = FakeQuitHost()
    quitter = rig.controller()
    quitter.clear_or_quit()
    rig.now += DOUBLE_PRESS_S * 2
    for forget in rig.timers:
        forget()
    assert rig.status.notice is None
    quitter.clear_or_quit()
    assert rig.quits == 0
    assert rig.status.notice == ("Press ctrl+c again to quit", "info")


def test_clearing_while_busy_does_not_arm_the_quit_the_next_press_interrupts() -> None:
    rig = FakeQuitHost(editor=FakeEditor("draft"), interrupts=FakeInterrupts(busy=True))
    quitter = rig.controller()
    quitter.clear_or_quit()  # clears the editor only
    quitter.clear_or_quit()  # interrupts, and arms the quit
    assert rig.interrupts.aborted == 1
    assert rig.quits == 0
    assert rig.status.notice == ("Interrupted · press ctrl+c again to quit", "info")
    quitter.clear_or_quit()
    assert rig.quits == 1


def test_text_typed_after_the_first_press_is_cleared_never_quit_on() -> None:
    rig = FakeQuitHost(editor=FakeEditor("first draft"))
    quitter = rig.controller()
    quitter.clear_or_quit()
    rig.editor.text = "hello"
    rig.now += DOUBLE_PRESS_S / 2
    quitter.clear_or_quit()  # within the double press, but the editor holds new text
    assert rig.quits == 0
    assert rig.editor.is_empty
    rig.now += DOUBLE_PRESS_S / 2
    quitter.clear_or_quit()  # now the editor is empty: the second press quits
    assert rig.quits == 1


def test_shutdown_begins_once() -> None:
    quitter = FakeQuitHost().controller()
    assert quitter.begin_shutdown()
    assert not quitter.begin_shutdown()
