"""The two forms of untrusted text: spelled out for approvals, stripped for display."""

from __future__ import annotations

import pytest

from picode.ai.untrusted import as_displayed, one_line, safe, visible, visible_parts

SPOOF = "echo HIDDEN-PAYLOAD-RAN > hidden_ran.txt\r\x1b[2K\x1b[1Als -la"
HOSTILE = [
    "\x1b]52;c;aGVsbG8=\x07",  # OSC 52: write the clipboard
    "\x1b]0;pwned\x07",  # window title
    "\x1b]0;pwned\x1b\\",  # the same, ended by ST
    "\x1b[2J",  # clear the screen
    "\x9b2J",  # the same with the one-byte C1 CSI
    "\x9d0;pwned\x9c",  # C1 OSC
    "\x1bP1$r\x1b\\",  # DCS
    "\x1bc",  # full reset
]


def test_the_spoofed_command_is_spelled_out_whole() -> None:
    shown = visible(SPOOF)
    assert shown == "echo HIDDEN-PAYLOAD-RAN > hidden_ran.txt\\r␛[2K␛[1Als -la"
    assert "\x1b" not in shown and "\r" not in shown


@pytest.mark.parametrize(
    ("char", "spelled"),
    [
        ("\x07", "\\x07"),
        ("\x00", "\\0"),
        ("\x7f", "\\x7f"),
        ("\x9b", "\\x9b"),
        ("\u202e", "U+202E"),
        ("\u2066", "U+2066"),
        ("\u200b", "U+200B"),
        ("\u061c", "U+061C"),
        ("\U000e0041", "U+E0041"),
    ],
)
def test_each_hidden_character_gets_a_spelling(char: str, spelled: str) -> None:
    assert visible(f"a{char}b") == f"a{spelled}b"


def test_every_control_and_format_character_is_spelled_out() -> None:
    import unicodedata

    hidden = [
        chr(code)
        for code in range(0x110000)
        if unicodedata.category(chr(code)) in ("Cc", "Cf", "Zl", "Zp") and chr(code) not in "\n\t"
    ]
    assert [char for char in hidden if visible(char) == char] == []


def test_newlines_and_tabs_stay_and_newlines_can_be_marked() -> None:
    assert visible("a\tb\nc") == "a\tb\nc"
    assert visible("rm x\nls", mark_newlines=True) == "rm x↵\nls"
    parts = list(visible_parts("a\x1bb", mark_newlines=True))
    assert parts == [("a", False), ("␛", True), ("b", False)]


def test_clean_text_comes_back_as_the_same_object() -> None:
    text = "plain text, ünïcödé and emoji 🙂\n\tindented"
    assert visible(text) is text
    assert safe(text) is text


@pytest.mark.parametrize("sequence", HOSTILE)
def test_safe_removes_every_sequence_whole(sequence: str) -> None:
    assert safe(f"before{sequence}after") == "beforeafter"


def test_safe_keeps_layout_and_reads_crlf_as_a_newline() -> None:
    assert safe("a\r\nb\tc\rd\x07\u202ee\n") == "a\nb\tcde\n"


def test_a_sequence_cut_between_two_pieces_loses_its_introducer() -> None:
    first, second = "text\x1b]52;c;", "aGVsbG8=\x07more"
    joined = safe(first) + safe(second)
    assert "\x1b" not in joined and "\x07" not in joined
    assert joined.startswith("text") and joined.endswith("more")


def test_an_unended_osc_swallows_no_more_than_its_line() -> None:
    assert safe("a\x1b]0;title\nnext line") == "a\nnext line"


def test_one_line_spells_out_and_cuts() -> None:
    assert one_line("feature\x1b]0;x\x07\nmain") == "feature␛]0;x\\x07↵main"
    assert one_line("abcdefgh", 5) == "abcd…"


def test_a_commands_output_reads_as_a_terminal_leaves_it() -> None:
    assert as_displayed("plain\ttext\n") == "plain\ttext\n"
    assert as_displayed("\x1b]0;title\x07\x1b[2K\x1b[1;32mok\x1b[0m") == "ok"
    # Written over from the line's start; what the shorter piece did not reach stays.
    assert as_displayed("50%\r100%\nnext") == "100%\nnext"
    assert as_displayed("abcdef\rXY") == "XYcdef"
    assert as_displayed("windows\r\nline\r\n") == "windows\nline\n"
    # A colour between a carriage return and the text does not hide the overwrite; an
    # erase in line clears what the shorter text did not reach.
    assert as_displayed("old text\r\x1b[33mnew\x1b[0m") == "new text"
    assert as_displayed("downloading 100%\r\x1b[Kdone") == "done"
    assert as_displayed("downloading 100%\r\x1b[2Kdone\r\nnext") == "done\nnext"
    # Whatever is left that a terminal would act on is still removed.
    assert as_displayed("bell\x07 \u202eevil\x9b31m") == "bell evil"
