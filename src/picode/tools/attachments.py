"""``@path`` in a prompt attaches that file: one rule for the TUI and the command line.

The typed text is sent as written (the mention included, so recalling the message gives it
back unchanged); each file follows it as its own content block in the format of
agent/file_blocks.py, text cut at the read tool's limits. Front ends show the blocks as
"attached: path (N lines)" lines (``split_attachments``), for live and resumed sessions
alike.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from pathlib import Path

from picode.agent.file_blocks import Attached, image_file_note, text_file_block
from picode.ai.types import ImageContent, UserContent
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
#: ``server:scheme:…``: an MCP resource mention (docs/mcp.md), not a path.
_RESOURCE = re.compile(r"^[A-Za-z0-9_-]{1,40}:[A-Za-z][A-Za-z0-9+.-]*:")


class AttachmentError(ValueError):
    """A mentioned file exists but cannot be sent (binary, too big, unreadable)."""


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
        if _RESOURCE.match(name) and not path.exists():
            continue  # @server:uri, an MCP server's resource: the session attaches it
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
    body = "\n".join(window.lines)
    if cut:
        body += (
            f"\n[Only lines 1-{window.end_line} of {total} are attached (the limit is "
            f"{MAX_LINES} lines or {MAX_BYTES // 1024} kB); read the file from line "
            f"{window.end_line + 1} for the rest.]"
        )
    sent = len(window.lines) if cut else None
    return [text_file_block(shown, total, sent, body)], Attached(shown, "text", total, sent)


def _image(shown: str, mime_type: str, data: bytes) -> tuple[list[UserContent], Attached]:
    if len(data) > MAX_IMAGE_BYTES:
        raise AttachmentError(
            f"@{shown} is an image larger than {MAX_IMAGE_BYTES // (1024 * 1024)} MB, too big "
            "to send; attach a smaller copy"
        )
    size = format_size(len(data))
    note = image_file_note(shown, mime_type, size)
    image = ImageContent(base64.b64encode(data).decode("ascii"), mime_type)
    return [note, image], Attached(shown, "image", size=size)
