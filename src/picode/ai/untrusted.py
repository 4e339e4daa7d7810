"""Untrusted text (from the model, a tool, a file) on its way to a person: two forms.

``visible`` is for what a person approves: nothing is hidden or dropped, every character a
terminal would act on or not draw is spelled out (``␛[2K``, ``\\r``, ``\\x07``, ``U+202E``),
so what is read is what runs. ``safe`` is for everything else shown on a terminal (replies,
tool output, file and branch names): escape sequences and control characters are removed so
none reaches the terminal (no clipboard write, title change or screen clear), newlines and
tabs stay. Both return the text itself, unchanged, when there is nothing to do: one regex
search, so the streaming path pays next to nothing for text that is clean.

Kept in ``ai/`` (it knows nothing but strings) so every layer above may use it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

#: Bidi controls: they reorder what is drawn, so a command can read differently than it runs.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
#: Characters drawn as nothing or that break lines unseen: every format character (Unicode
#: category Cf: zero-width, soft hyphen, tags used to smuggle text), line and paragraph
#: separators, fillers.
_INVISIBLE = (
    "\u00ad\u034f\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200d\u2028\u2029\u2060-\u2065\u206a-\u206f\u3164\ufeff"
    "\uffa0\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e007f"
)
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f"

_NEEDS_VISIBLE = re.compile(f"[{_CONTROLS}{_BIDI}{_INVISIBLE}\n]")
_NAMED = {"\r": "\\r", "\x1b": "␛", "\x00": "\\0"}

#: Escape sequences as a terminal parses them, each removed whole; a sequence cut short (at
#: the end of a streamed piece) loses its introducer, which is all a terminal acts on.
_SEQUENCE = (
    r"\x1b\[[0-?]*[ -/]*[@-~]?"  # CSI: cursor moves, erase, colours
    r"|\x1b[\]PX^_][^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"  # OSC (52 clipboard, title), DCS…
    r"|\x1b[ -/]*[0-~]?"  # the other ESC forms (charsets, keypad, RIS)
    r"|\x9b[0-?]*[ -/]*[@-~]?"  # C1 CSI
    r"|[\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"  # C1 OSC, DCS…
)
_UNSAFE = re.compile(f"[{_CONTROLS}\u202a-\u202e\u2066-\u2069]")
_SAFE_SUB = re.compile(f"{_SEQUENCE}|\r\n|[{_CONTROLS}\u202a-\u202e\u2066-\u2069]")


def visible_parts(text: str, *, mark_newlines: bool = False) -> Iterator[tuple[str, bool]]:
    """``text`` as (piece, spelled_out) pairs: plain runs and the spelling of each character
    a terminal would hide or act on. ``mark_newlines``: a newline also shows as ``↵`` (in a
    command it is a separator, not just layout); it is kept after the mark either way."""
    start = 0
    for match in _NEEDS_VISIBLE.finditer(text):
        char = match.group()
        if char == "\n" and not mark_newlines:
            continue
        if match.start() > start:
            yield text[start : match.start()], False
        yield spell(char), True
        if char == "\n":
            yield "\n", False
        start = match.end()
    if start < len(text):
        yield text[start:], False


def visible(text: str, *, mark_newlines: bool = False) -> str:
    """Every character a terminal would act on or not draw, spelled out; nothing dropped."""
    if not _NEEDS_VISIBLE.search(text):
        return text
    return "".join(piece for piece, _ in visible_parts(text, mark_newlines=mark_newlines))


def spell(char: str) -> str:
    if char == "\n":
        return "↵"
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0xA0 else f"U+{code:04X}"


def safe(text: str) -> str:
    """``text`` with no escape sequence, control character or bidi override left (``\\n`` and
    ``\\t`` kept, ``\\r\\n`` read as ``\\n``): fit to write to a terminal or a widget."""
    if not _UNSAFE.search(text):
        return text
    return _SAFE_SUB.sub(_safe_piece, text)


def _safe_piece(match: re.Match[str]) -> str:
    return "\n" if match.group() == "\r\n" else ""


_ESCAPE_SEQUENCE = re.compile(_SEQUENCE)
#: Erase in line (``CSI K``, ``CSI 2 K``…): what a progress line clears behind its text.
_ERASE_IN_LINE = re.compile(r"\x1b\[[0-2]?K")


def as_displayed(output: str) -> str:
    """A command's output as a terminal leaves it on screen, for the model and the
    transcript: colours and other escape sequences gone, and a carriage return's line
    written over from its start (a progress bar reads as its last state, not every state
    it passed through), then ``safe``."""
    if "\r" not in output and "\x1b" not in output and "\x9b" not in output:
        return safe(output)
    output = output.replace("\r\n", "\n")
    if "\r" in output:
        output = "\n".join(
            _written_over(line) if "\r" in line else line for line in output.split("\n")
        )
    return safe(_ESCAPE_SEQUENCE.sub("", output))


def _written_over(line: str) -> str:
    shown = ""
    for piece in line.split("\r"):
        text = _ESCAPE_SEQUENCE.sub("", piece)
        # Erased behind the text (a progress line's usual "\r\x1b[K"): the old tail goes.
        shown = text if _ERASE_IN_LINE.search(piece) else text + shown[len(text) :]
    return shown


def one_line(text: str, limit: int | None = None) -> str:
    """An untrusted name or value on one line: spelled out, newlines as ``↵``, cut at
    ``limit`` characters with ``…``."""
    shown = visible(text, mark_newlines=True).replace("\n", "")
    if limit is not None and len(shown) > limit:
        shown = shown[: max(0, limit - 1)] + "…"
    return shown
