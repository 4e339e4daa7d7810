"""``@path`` in a prompt attaches that file: one rule for the TUI and the command line.

The typed text is sent as written (the mention included, so recalling the message gives it
back unchanged); each file follows it as its own content block: text inside
``<file path="…" lines="N">…</file>``, cut at the read tool's limits, and images as image
blocks announced by an empty ``<file path="…" type="image/png">`` element. Front ends
show the blocks as "attached: path (N lines)" lines (``split_attachments``), for live and
resumed sessions alike.
"""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass, field
from pathlib import Path

from picode.ai.types import ImageContent, TextContent, UserContent, UserMessage
from picode.tools._files import SNIFF_BYTES, binary_reason, format_size
from picode.tools._paths import display_path
from picode.tools.read import (
    MAX_BYTES,
    MAX_IMAGE_BYTES,
    MAX_LINES,
    image_mime_type,
    read_text_window,
)

#: ``@path`` or ``@"path with spaces"`` at the start of a word (``me@example.com`` is not).
MENTION = re.compile(r'(?<!\S)@(?:"([^"\n]+)"|(\S+))')
TRAILING_PUNCTUATION = ",.;:!?)]}'\""
_BLOCK = re.compile(r'\A\n\n<file path="([^"]*)"((?: [a-z]+="[^"]*")*)>')
_ATTRIBUTE = re.compile(r'([a-z]+)="([^"]*)"')


class AttachmentError(ValueError):
    """A mentioned file exists but cannot be sent (binary, too big, unreadable)."""


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


@dataclass(slots=True)
class Attachments:
    """The blocks that follow the typed text, and what to tell the person."""

    blocks: list[UserContent] = field(default_factory=list)
    attached: list[Attached] = field(default_factory=list)
    #: Mentions that look like paths but name no file: sent as plain text.
    warnings: list[str] = field(default_factory=list)


def attach_mentions(text: str, cwd: Path) -> Attachments:
    """The files ``text`` mentions, each once, in the order first mentioned.

    Raises ``AttachmentError`` for a file that exists but cannot be sent: nothing is sent
    then, so the person can fix the message instead of the model getting half of it.
    """
    found = Attachments()
    seen: set[Path] = set()
    for match in MENTION.finditer(text):
        quoted, bare = match.group(1), match.group(2)
        name = quoted if quoted is not None else bare.rstrip(TRAILING_PUNCTUATION)
        if not name:
            continue
        path = Path(cwd, Path(name).expanduser())
        if path.is_dir():
            found.warnings.append(f"@{name} is a folder; sent as text (attach files, not folders)")
            continue
        if not path.is_file():
            if quoted is not None or "/" in name or "." in name:
                # Meant as a file; "@dataclass" or "@team" is just a word.
                found.warnings.append(f"@{name}: no such file; sent as text")
            continue
        resolved = path.resolve()
        if resolved in seen:
            continue
        seen.add(resolved)
        blocks, attached = _attach(path, display_path(cwd, path))
        found.blocks += blocks
        found.attached.append(attached)
    return found


def split_attachments(message: UserMessage) -> tuple[str, list[Attached]]:
    """The typed text of ``message`` and the files attached to it (none for plain text)."""
    if isinstance(message.content, str):
        return message.content, []
    typed: list[str] = []
    attached: list[Attached] = []
    for block in message.content:
        if not isinstance(block, TextContent):
            continue
        if (header := _BLOCK.match(block.text)) is not None:
            attached.append(_parse_header(header.group(1), header.group(2)))
        else:
            typed.append(block.text)
    return "".join(typed), attached


def _attach(path: Path, shown: str) -> tuple[list[UserContent], Attached]:
    try:
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
            mime_type = image_mime_type(head)
            if mime_type is not None:
                data = head + handle.read(MAX_IMAGE_BYTES + 1 - len(head))
                return _image(shown, mime_type, data)
            reason = binary_reason(head)
            if reason is not None:
                raise AttachmentError(
                    f"@{shown} looks like a binary file ({reason}); only text files and images "
                    "(PNG, JPEG, GIF, WebP) can be attached"
                )
            handle.seek(0)
            window = read_text_window(handle, 1, None)
    except OSError as exc:
        raise AttachmentError(f"cannot read @{shown}: {exc.strerror or exc}") from None
    total = window.total_lines
    cut = window.end_line < total
    attributes = f' path="{_quote(shown)}" lines="{total}"'
    body = "\n".join(window.lines)
    if cut:
        attributes += f' sent="{len(window.lines)}"'
        body += (
            f"\n[Only lines 1-{window.end_line} of {total} are attached (the limit is "
            f"{MAX_LINES} lines or {MAX_BYTES // 1024} kB); read the file from line "
            f"{window.end_line + 1} for the rest.]"
        )
    block = TextContent(f"\n\n<file{attributes}>\n{body}\n</file>")
    return [block], Attached(shown, "text", total, len(window.lines) if cut else None)


def _image(shown: str, mime_type: str, data: bytes) -> tuple[list[UserContent], Attached]:
    if len(data) > MAX_IMAGE_BYTES:
        raise AttachmentError(
            f"@{shown} is an image larger than {MAX_IMAGE_BYTES // (1024 * 1024)} MB, too big "
            "to send; attach a smaller copy"
        )
    size = format_size(len(data))
    note = TextContent(f'\n\n<file path="{_quote(shown)}" type="{mime_type}" size="{size}"></file>')
    image = ImageContent(base64.b64encode(data).decode("ascii"), mime_type)
    return [note, image], Attached(shown, "image", size=size)


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
