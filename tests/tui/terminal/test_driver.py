"""The input wait follows the parser's pending escape deadline (tui/driver.py)."""

from __future__ import annotations

import pytest
from textual import events
from textual._time import get_time
from textual._xterm_parser import XTermParser

from picode.tui import ESCDELAY_MS
from picode.tui.app import PicodeApp
from picode.tui.driver import (
    IDLE_WAIT_S,
    LONE_ESC_GRACE_S,
    READ_SIZE,
    LoneEscape,
    PromptEscDriver,
    input_wait,
    lone_escape_grace,
)


def test_no_pending_escape_sleeps_until_input() -> None:
    parser = XTermParser()
    assert list(parser.feed("a")) != []
    assert IDLE_WAIT_S is None
    assert input_wait(parser, get_time()) is None


def test_an_idle_input_thread_stops_when_told_without_polling() -> None:
    """Nothing wakes the thread on a timer; stopping it does (the event's pipe)."""
    import asyncio
    import os
    import threading

    from textual.app import App

    async def make() -> PromptEscDriver:
        return PromptEscDriver(App(), debug=False, mouse=False)  # needs a running loop

    read_end, write_end = os.pipe()
    driver = asyncio.run(make())
    driver.fileno = read_end
    thread = threading.Thread(target=driver.run_input_thread, daemon=True)
    try:
        thread.start()
        thread.join(0.3)
        assert thread.is_alive()  # asleep: nothing came
        driver.exit_event.set()
        thread.join(1.0)
        assert not thread.is_alive()
    finally:
        os.close(read_end)
        os.close(write_end)


def test_a_lone_escape_shortens_the_wait_to_its_deadline() -> None:
    parser = XTermParser()
    assert list(parser.feed("\x1b")) == []  # held: it may start a sequence
    now = get_time()
    wait = input_wait(parser, now)
    assert wait is not None and 0 < wait < 1
    # Past the deadline the wait is zero, and the parser gives the Escape key at once.
    assert input_wait(parser, now + 1) == 0
    deadline = now + wait
    while get_time() < deadline:
        pass
    keys = [event for event in parser.tick() if isinstance(event, events.Key)]
    assert [key.key for key in keys] == ["escape"]


def test_a_sequence_split_across_reads_still_parses() -> None:
    parser = XTermParser()
    seen = [*parser.feed("\x1b"), *parser.feed("["), *parser.feed("A")]
    assert [e.key for e in seen if isinstance(e, events.Key)] == ["up"]


def test_the_app_uses_it_on_posix() -> None:
    import os

    if os.name == "posix":
        assert PicodeApp.get_driver_class(object.__new__(PicodeApp)) is PromptEscDriver


def test_a_lone_escape_read_by_itself_is_released_after_the_grace() -> None:
    parser = XTermParser()
    lone = LoneEscape(LONE_ESC_GRACE_S)
    list(parser.feed("\x1b"))
    now = get_time()
    lone.after_read(parser, "\x1b", 1, now)
    assert lone.wait(parser, now) == pytest.approx(LONE_ESC_GRACE_S)
    lone.release_if_due(parser, now + LONE_ESC_GRACE_S)
    assert [e.key for e in parser.tick() if isinstance(e, events.Key)] == ["escape"]


def test_more_bytes_within_the_grace_still_make_one_key() -> None:
    parser = XTermParser()
    lone = LoneEscape(LONE_ESC_GRACE_S)
    list(parser.feed("\x1b"))
    lone.after_read(parser, "\x1b", 1, get_time())
    seen = list(parser.feed("[A"))  # the up arrow, cut after its ESC
    lone.after_read(parser, "[A", 2, get_time())
    lone.release_if_due(parser, get_time() + 1)
    seen += parser.tick()
    assert [e.key for e in seen if isinstance(e, events.Key)] == ["up"]


@pytest.mark.parametrize(
    ("before", "data", "read_size"),
    [
        ("", "x" * 10 + "\x1b", READ_SIZE),  # a full read: the rest may be unread yet
        ("", "\x1b[200~pasted \x1b", 16),  # inside a bracketed paste
        ("\x1b[200~text", "more\x1b", 5),  # a paste that began in an earlier read
    ],
    ids=["full-read", "paste", "paste-begun-earlier"],
)
def test_an_escape_that_may_be_cut_waits_the_whole_delay(
    before: str, data: str, read_size: int
) -> None:
    parser = XTermParser()
    lone = LoneEscape(LONE_ESC_GRACE_S)
    if before:
        list(parser.feed(before))
        lone.after_read(parser, before, len(before), get_time())
    list(parser.feed(data))
    now = get_time()
    lone.after_read(parser, data, read_size, now)
    assert lone.release_at is None
    assert lone.wait(parser, now) == input_wait(parser, now)


def test_an_escdelay_the_person_chose_applies_to_every_escape() -> None:
    assert lone_escape_grace(int(ESCDELAY_MS) / 1000) == LONE_ESC_GRACE_S
    assert lone_escape_grace(0.5) is None
    parser = XTermParser()
    lone = LoneEscape(None)
    list(parser.feed("\x1b"))
    lone.after_read(parser, "\x1b", 1, get_time())
    assert lone.release_at is None
