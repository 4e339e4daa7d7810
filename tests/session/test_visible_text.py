"""Untrusted text shown to decide on: every control, escape and bidi character spelled out."""

from __future__ import annotations

from picode.session.visible_text import one_line, visible


def test_controls_escapes_and_bidi_are_spelled_out() -> None:
    text = "ls\r\x1b[2K\x1b]0;t\x07 \u202eevil\tx\x7f"
    assert visible(text) == "ls\\r␛[2K␛]0;tU+0007 U+202Eevil\\txU+007F"


def test_one_line_keeps_newlines_visible_and_cuts() -> None:
    assert visible("a\nb") == "a\nb"
    assert one_line("a\nb") == "a\\nb"
    shown = one_line("http://x" + "\n" * 80, limit=20)
    assert len(shown) == 20 and shown.endswith("…") and "\n" not in shown
