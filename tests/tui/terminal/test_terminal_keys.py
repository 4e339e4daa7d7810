"""Alt+Enter arrives as ESC CR in most terminals; it must not be read as plain Enter."""

from __future__ import annotations

from textual._xterm_parser import XTermParser

from picode.tui.terminal_keys import enable_alt_enter


def _keys(data: str) -> list[str]:
    parser = XTermParser()
    keys = [event.key for event in parser.feed(data) if hasattr(event, "key")]
    keys += [event.key for event in parser.feed("") if hasattr(event, "key")]
    return keys


def test_escape_cr_is_alt_enter_and_cr_stays_enter() -> None:
    enable_alt_enter()
    assert _keys("\x1b\r") == ["alt+enter"]
    assert _keys("\r") == ["enter"]
    assert _keys("\x1b") == ["escape"]
