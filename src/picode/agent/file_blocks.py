"""How an attached file sits in a user message: the one format ``@path`` writes
(tools/attachments.py) and every front end and the session read back.

Each file follows the typed text as its own text block: its content inside
``<file path="…" lines="N">…</file>``, or, for an image, an empty
``<file path="…" type="image/png" size="…">`` element followed by the image block.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from picode.ai.types import TextContent, UserMessage

#: A note picode adds to a prompt for the model (plan mode went on or off): not typed, and
#: never shown as part of the message.
_NOTE = "\n\n<picode-note>"
_BLOCK = re.compile(r'\A\n\n<file path="([^"]*)"((?: [a-z]+="[^"]*")*)>')
_ATTRIBUTE = re.compile(r'([a-z]+)="([^"]*)"')


@dataclass(slots=True, frozen=True)
class Attached:
    """What the transcript says about one attached file."""

    path: str
    kind: str  # "text" or "image"
    lines: int = 0
    #: Lines sent when the file was longer than the limit; None when all of it went.
    lines_sent: int | None = None
    size: str = ""

    def describe(self) -> str:
        if self.kind == "image":
            return f"attached: {self.path} (image, {self.size})"
        noun = "line" if self.lines == 1 else "lines"
        if self.lines_sent is not None:
            return f"attached: {self.path} (first {self.lines_sent} of {self.lines} {noun})"
        return f"attached: {self.path} ({self.lines} {noun})"


def text_file_block(shown: str, total_lines: int, lines_sent: int | None, body: str) -> TextContent:
    """A text file's block; ``lines_sent`` when only the first lines went."""
    attributes = f' path="{_quote(shown)}" lines="{total_lines}"'
    if lines_sent is not None:
        attributes += f' sent="{lines_sent}"'
    return TextContent(f"\n\n<file{attributes}>\n{body}\n</file>")


def image_file_note(shown: str, mime_type: str, size: str) -> TextContent:
    """The text block that announces the image block after it."""
    return TextContent(f'\n\n<file path="{_quote(shown)}" type="{mime_type}" size="{size}"></file>')


def mode_note(text: str) -> TextContent:
    """A block that tells the model something changed; read back, it is left out."""
    return TextContent(f"{_NOTE}{text}</picode-note>")


def notes_in(message: UserMessage) -> list[str]:
    """The text of each ``mode_note`` block of ``message``, in order."""
    if isinstance(message.content, str):
        return []
    return [
        block.text[len(_NOTE) : -len("</picode-note>")]
        for block in message.content
        if isinstance(block, TextContent) and block.text.startswith(_NOTE)
    ]


def is_note(text: str) -> bool:
    """Is this text block a ``mode_note`` (said to the model, never part of the message)?"""
    return text.startswith(_NOTE)


def read_file_block(text: str) -> tuple[Attached, str] | None:
    """An attached file's text block read back: what is said of the file and the contents
    that went with it (none for an image's note: its image block follows); None for any
    other text."""
    header = _BLOCK.match(text)
    if header is None:
        return None
    body = text[header.end() :].removeprefix("\n").removesuffix("</file>").removesuffix("\n")
    return _parse_header(header.group(1), header.group(2)), body


def split_attachments(message: UserMessage) -> tuple[str, list[Attached]]:
    """The typed text of ``message`` and the files attached to it (none for plain text)."""
    if isinstance(message.content, str):
        return message.content, []
    typed: list[str] = []
    attached: list[Attached] = []
    for block in message.content:
        if not isinstance(block, TextContent) or is_note(block.text):
            continue
        if (header := _BLOCK.match(block.text)) is not None:
            attached.append(_parse_header(header.group(1), header.group(2)))
        else:
            typed.append(block.text)
    return "".join(typed), attached


def _parse_header(quoted_path: str, raw_attributes: str) -> Attached:
    attributes = dict(_ATTRIBUTE.findall(raw_attributes))
    path = html.unescape(quoted_path)
    if "type" in attributes:
        return Attached(path, "image", size=html.unescape(attributes.get("size", "")))
    lines = _number(attributes.get("lines"))
    sent = attributes.get("sent")
    return Attached(path, "text", lines or 0, _number(sent) if sent is not None else None)


def _number(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() else None


def _quote(path: str) -> str:
    return html.escape(path, quote=True)
