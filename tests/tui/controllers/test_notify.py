"""Terminal notifications: the bell or an OSC 9 / 777 notification when a run ends or a call
waits for approval while the terminal is not focused; nothing when it is, when the person
stopped the run, or when switched off. The real app on a real session (scripted provider),
with the driver's output recorded."""

from __future__ import annotations

from typing import Any

import pytest
from textual import events

from picode.ai.providers.faux import FauxToolCall, FauxTurn, text_turn, tool_turn
from picode.session.config import NotificationSettings
from picode.session.config.settings import RetrySettings, Settings
from picode.tui.app import PicodeApp
from picode.tui.controllers.notify import (
    BEL,
    TerminalNotifier,
    clean,
    pick_method,
    sequence,
)
from tests.tui.conftest import SIZE, TuiHarness, opened, run, wait_until

OSC9_DONE = "\x1b]9;picode: done\x07"
OSC777_DONE = "\x1b]777;notify;picode;done\x07"


def _settings(method: str = "bell", **kwargs: Any) -> Settings:
    return Settings(notifications=NotificationSettings(method=method, **kwargs))  # type: ignore[arg-type]


def _record(app: PicodeApp) -> list[str]:
    """What the app writes to the terminal besides its frames (the headless driver draws
    nothing, so this is all of it)."""
    written: list[str] = []
    driver = app._driver
    assert driver is not None
    driver.write = written.append  # type: ignore[method-assign]
    return written


async def _blur(pilot: Any) -> None:
    app: PicodeApp = pilot.app
    app.post_message(events.AppBlur())
    await wait_until(pilot, lambda: not app.app_focus, what="the blur")


async def _run_prompt(pilot: Any, text: str = "go") -> None:
    """Send ``text`` as Enter would, without a key event (a key means the person is there:
    Textual counts it as focus) and wait until the session is idle again."""
    app: PicodeApp = pilot.app
    session = app.session
    assert session is not None
    before = len(session.messages)
    app.submitter.submit(text, follow_up=False)
    await wait_until(
        pilot,
        lambda: len(session.messages) > before and not session.is_running,
        what="the end of the run",
    )


@pytest.mark.parametrize(
    ("method", "expected"),
    [("bell", BEL), ("osc9", OSC9_DONE), ("osc777", OSC777_DONE)],
)
def test_a_run_ending_while_blurred_notifies_by_the_chosen_method(
    tui: TuiHarness, method: str, expected: str
) -> None:
    app = tui.app(tui.faux(text_turn("Finished.")), settings=_settings(method))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            written = _record(app)
            await _blur(pilot)
            await _run_prompt(pilot)
            await wait_until(pilot, lambda: bool(written), what="the notification")
            await app.workers.wait_for_complete()
            assert written == [expected]

    run(scenario())


@pytest.mark.parametrize(
    ("focus", "settings"),
    [
        (True, _settings("osc9")),  # focused: the person sees it end
        (False, _settings("off")),
        (False, _settings("osc9", when=["approval"])),
    ],
    ids=["focused", "off", "not-for-done"],
)
def test_no_notification_when_focused_or_switched_off(
    tui: TuiHarness, focus: bool, settings: Settings
) -> None:
    app = tui.app(tui.faux(text_turn("Finished."), text_turn("Again.")), settings=settings)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            written = _record(app)
            if not focus:
                await _blur(pilot)
            await _run_prompt(pilot)
            await _run_prompt(pilot, "again")
            await app.workers.wait_for_complete()
            assert written == []
            assert app.notifier.notify("done", "done") is False

    run(scenario())


def test_a_terminal_that_never_reports_focus_counts_as_focused(tui: TuiHarness) -> None:
    app = tui.app(tui.faux(text_turn("Finished.")), settings=_settings("bell"))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            written = _record(app)
            await _run_prompt(pilot)
            await app.workers.wait_for_complete()
            assert written == []
            # Focus reports after all: the next end rings.
            await _blur(pilot)
            app.post_message(events.AppFocus())
            await wait_until(pilot, lambda: app.app_focus, what="the focus")
            await _blur(pilot)
            assert app.notifier.notify("done", "done") is True
            assert written == [BEL]

    run(scenario())


def test_a_run_stopped_with_esc_is_not_announced(tui: TuiHarness) -> None:
    app = tui.app(
        tui.faux(text_turn("Working on it", hang=True), text_turn("Finished.")),
        settings=_settings("bell"),
    )

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            session = app.session
            assert session is not None
            written = _record(app)
            await _blur(pilot)
            app.submitter.submit("go", follow_up=False)
            await wait_until(pilot, lambda: session.is_running, what="the run")
            assert app.interrupts.handle()  # what Esc does (a key would count as focus)
            await wait_until(pilot, lambda: not session.is_running, what="the abort")
            await app.workers.wait_for_complete()
            assert written == []
            await _run_prompt(pilot, "again")  # the next run that ends on its own rings
            await wait_until(pilot, lambda: bool(written), what="the notification")
            await app.workers.wait_for_complete()
            assert written == [BEL]

    run(scenario())


def test_an_approval_waiting_while_blurred_notifies_with_the_tool_name(
    tui: TuiHarness,
) -> None:
    turns = [tool_turn(FauxToolCall("bash", {"command": "echo hi"})), text_turn("Done.")]
    settings = Settings(
        approval="all", notifications=NotificationSettings(method="osc777", when=["approval"])
    )
    app = tui.app(tui.faux(*turns), settings=settings)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            written = _record(app)
            await _blur(pilot)
            app.submitter.submit("run it", follow_up=False)
            await wait_until(pilot, lambda: bool(written), what="the notification")
            assert written == ["\x1b]777;notify;picode;waiting for approval: bash\x07"]
            await wait_until(pilot, app.approvals.is_open, what="the approval prompt")
            app.approvals.refuse_all()

    run(scenario())


# --- the notifier on its own -------------------------------------------------------------


class FakeConfig:
    def __init__(self, settings: NotificationSettings | None) -> None:
        self.notifications = settings


class FakeNotifyHost:
    def __init__(self, method: str = "osc777", *, focused: bool = False) -> None:
        self.app_focus = focused
        self.session = None
        self.config = FakeConfig(NotificationSettings(method=method))  # type: ignore[arg-type]
        self.written: list[str] = []

    def write_terminal(self, data: str) -> None:
        self.written.append(data)

    def run_worker(self, work: Any, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("not here")


@pytest.mark.parametrize("method", ["osc9", "osc777"])
def test_a_tool_name_with_escape_sequences_cannot_end_or_add_to_the_osc(method: str) -> None:
    host = FakeNotifyHost(method)
    notifier = TerminalNotifier(host, env={})

    notifier.approval_waiting("bash\x1b]52;c;ZXZpbA==\x07\x1b]0;owned\x1b\\;x\x9d7\n\ttail")

    (data,) = host.written
    assert data.count("\x1b") == 1 and data.startswith("\x1b]")
    assert data.count(BEL) == 1 and data.endswith(BEL)
    assert "\x9d" not in data and "\n" not in data and "\t" not in data
    assert "52;" not in data and "owned" not in data
    assert "waiting for approval: bash" in data and "tail" in data
    if method == "osc777":  # the tool's text never adds a field
        assert data.count(";") == 3


def test_inside_tmux_an_osc_goes_through_its_passthrough() -> None:
    host = FakeNotifyHost("osc9")
    notifier = TerminalNotifier(host, env={"TMUX": "/tmp/tmux-1/default,1,0"})

    assert notifier.notify("done", "done")

    assert host.written == ["\x1bPtmux;\x1b\x1b]9;picode: done\x07\x1b\\"]


def test_an_escalation_says_it_runs_outside_the_sandbox() -> None:
    host = FakeNotifyHost("osc9")
    TerminalNotifier(host, env={}).approval_waiting("bash", escalation=True)
    assert host.written == ["\x1b]9;picode: waiting for approval: bash outside the sandbox\x07"]


def test_nothing_is_written_after_picode_starts_quitting() -> None:
    host = FakeNotifyHost("bell")
    notifier = TerminalNotifier(host, env={})
    notifier.stop()
    assert not notifier.notify("done", "done")
    assert host.written == []


@pytest.mark.parametrize(
    ("env", "method"),
    [
        ({"TERM_PROGRAM": "iTerm.app"}, "osc9"),
        ({"TERM": "xterm-kitty", "KITTY_WINDOW_ID": "1"}, "osc9"),
        ({"TERM_PROGRAM": "ghostty", "TERM": "xterm-ghostty"}, "osc777"),
        ({"TERM_PROGRAM": "WezTerm"}, "osc777"),
        ({"TERM": "foot"}, "osc777"),
        ({"TERM": "xterm-256color"}, "bell"),
        ({"TERM_PROGRAM": "Apple_Terminal"}, "bell"),
        ({}, "bell"),
        # tmux swallows OSC unless passthrough is on: its bell reaches the outer terminal.
        ({"TERM_PROGRAM": "tmux", "TMUX": "/tmp/t,1,0", "LC_TERMINAL": "iTerm2"}, "bell"),
        ({"STY": "1.pts-0.host", "TERM_PROGRAM": "iTerm.app"}, "bell"),
    ],
)
def test_auto_picks_from_the_terminal(env: dict[str, str], method: str) -> None:
    assert pick_method(env) == method


def test_auto_uses_the_environment() -> None:
    host = FakeNotifyHost("auto")
    notifier = TerminalNotifier(host, env={"TERM_PROGRAM": "iTerm.app"})
    assert notifier.notify("approval", "waiting")
    assert host.written == ["\x1b]9;picode: waiting\x07"]


def test_clean_keeps_text_on_one_short_line() -> None:
    assert clean("a\nb\tc;d") == "a b c d"
    assert len(clean("x" * 500)) == 100
    assert sequence("off", "done") == ""


def test_a_bad_method_is_refused_by_the_settings() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        NotificationSettings(method="beep")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        NotificationSettings(when=["sometimes"])  # type: ignore[list-item]


def test_a_retried_run_is_announced_once_when_it_finally_ends(tui: TuiHarness) -> None:
    overloaded = FauxTurn(error="529 Overloaded: Overloaded", error_before_stream=True)
    settings = Settings(
        retry=RetrySettings(base_delay_ms=5, max_delay_ms=5),
        notifications=NotificationSettings(method="osc9"),
    )
    app = tui.app(tui.faux(overloaded, text_turn("Recovered.")), settings=settings)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            written = _record(app)
            await _blur(pilot)
            await _run_prompt(pilot)
            await wait_until(pilot, lambda: bool(written), what="the notification")
            await app.workers.wait_for_complete()
            assert written == [OSC9_DONE]

    run(scenario())


def test_a_run_that_fails_says_so(tui: TuiHarness) -> None:
    unauthorized = FauxTurn(error="401 Unauthorized: invalid key", error_before_stream=True)
    app = tui.app(tui.faux(unauthorized), settings=_settings("osc9"))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            written = _record(app)
            await _blur(pilot)
            await _run_prompt(pilot)
            await wait_until(pilot, lambda: bool(written), what="the notification")
            assert written == ["\x1b]9;picode: stopped by an error\x07"]

    run(scenario())
