"""The input wait follows the parser's pending escape deadline (tui/driver.py)."""

from __future__ import annotations

from textual import events
from textual._time import get_time
from textual._xterm_parser import XTermParser

from picode.tui.app import PicodeApp
from picode.tui.driver import IDLE_WAIT_S, PromptEscDriver, input_wait


def test_no_pending_escape_waits_the_idle_time() -> None:
    parser = XTermParser()
    assert list(parser.feed("a")) != []
    assert input_wait(parser, get_time()) == IDLE_WAIT_S


def test_a_lone_escape_shortens_the_wait_to_its_deadline() -> None:
    parser = XTermParser()
    assert list(parser.feed("\x1b")) == []  # held: it may start a sequence
    now = get_time()
    wait = input_wait(parser, now)
    assert 0 < wait < IDLE_WAIT_S
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
