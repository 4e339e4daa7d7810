"""read: a text file's lines as plain text (no line numbers added), or an image as an image
block.

details for text: ``{"path": str, "start_line": int, "end_line": int, "total_lines": int,
"truncated": bool}`` (``truncated``: lines after ``end_line`` were not returned);
for images: ``{"path": str, "mime_type": str, "bytes": int}``.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from pydantic import Field

from picode.agent.tool import BaseTool, OnUpdate, StrictParams, ToolError, ToolResult
from picode.ai.abort import AbortSignal
from picode.ai.types import ImageContent, TextContent
from picode.tools._files import SNIFF_BYTES, binary_reason, format_size
from picode.tools._paths import display_path, missing_path_error, resolve_path
from picode.tools.file_access import DISK, FileAccess

MAX_LINES = 2000
MAX_BYTES = 50 * 1024
MAX_LINE_CHARS = 2000
#: At most this much of one line is held in memory; the rest is only counted (a 200 MB
#: minified file is one line).
LINE_READ_CAP = 1024 * 1024
#: Providers reject larger images (Anthropic's limit); there is no resizer here.
MAX_IMAGE_BYTES = 5 * 1024 * 1024

DESCRIPTION = f"""\
Read a file from disk. Text is returned as plain text exactly as stored (no line numbers \
are added), at most {MAX_LINES} lines or {MAX_BYTES // 1024} kB per call; when a file is \
longer, the result ends with a note telling which offset to use next. offset is the 1-based \
line to start at and limit the number of lines to return: use them to page through large \
files. Lines longer than {MAX_LINE_CHARS} characters are cut with a marker. Images (PNG, \
JPEG, GIF, WebP) are returned as images you can see. Binary files are refused; use ls for \
folders."""


class ReadParams(StrictParams):
    path: str = Field(description="File to read, relative to the working folder or absolute.")
    offset: int | None = Field(
        default=None, ge=1, description="1-based line number to start reading at."
    )
    limit: int | None = Field(default=None, ge=1, description="Maximum number of lines to read.")


@dataclass(slots=True)
class TextWindow:
    lines: list[str]
    start_line: int
    total_lines: int

    @property
    def end_line(self) -> int:
        return self.start_line + len(self.lines) - 1


class ReadTool(BaseTool):
    name = "read"
    read_only = True
    label = "Read"
    description = DESCRIPTION
    params_model = ReadParams

    def __init__(self, cwd: Path, files: FileAccess = DISK) -> None:
        self.cwd = cwd
        self.files = files

    async def run(self, args: ReadParams, signal: AbortSignal, on_update: OnUpdate) -> ToolResult:
        path = resolve_path(self.cwd, args.path)
        shown = display_path(self.cwd, path)
        if path.is_dir():
            raise ToolError(f"{shown} is a directory, not a file; use ls to list it.")
        if not path.exists():
            raise missing_path_error(self.cwd, path)
        if not path.is_file():
            raise ToolError(f"{shown} is not a regular file (a device, socket or pipe).")
        try:
            handle = await self.files.open_read(path)
        except PermissionError:
            raise ToolError(f"Cannot read {shown}: permission denied.") from None
        except OSError as exc:
            raise ToolError(f"Cannot read {shown}: {exc.strerror or exc}.") from None
        return await asyncio.to_thread(self._read, handle, shown, args.offset, args.limit)

    def _read(
        self, file: BinaryIO, shown: str, offset: int | None, limit: int | None
    ) -> ToolResult:
        try:
            with file as handle:
                head = handle.read(SNIFF_BYTES)
                mime_type = image_mime_type(head)
                if mime_type is not None:
                    return _image_result(handle, head, shown, mime_type)
                reason = binary_reason(head)
                if reason is not None:
                    raise ToolError(
                        f"{shown} looks like a binary file ({reason}); read only returns text "
                        "and images. Inspect it with bash (e.g. `file`, `xxd | head`)."
                    )
                handle.seek(0)
                window = read_text_window(handle, offset or 1, limit)
        except PermissionError:
            raise ToolError(f"Cannot read {shown}: permission denied.") from None
        except OSError as exc:
            raise ToolError(f"Cannot read {shown}: {exc.strerror or exc}.") from None
        return _text_result(window, shown)


def image_mime_type(head: bytes) -> str | None:
    """The image type announced by a file's magic bytes, if it is one the models accept."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def read_text_window(handle: BinaryIO, start: int, limit: int | None) -> TextWindow:
    """Decode only the requested lines; the rest of the file is just counted."""
    wanted = min(limit, MAX_LINES) if limit is not None else MAX_LINES
    lines: list[str] = []
    used_bytes = 0
    line_number = 0
    stopped_early = False
    for raw, left_out in _bounded_lines(handle):
        line_number += 1
        if line_number < start:
            continue
        if len(lines) >= wanted:
            stopped_early = True
            break
        text = _decode_line(raw, first=line_number == 1, left_out_bytes=left_out)
        cost = len(text.encode("utf-8", "replace")) + 1
        if lines and used_bytes + cost > MAX_BYTES:
            stopped_early = True
            break
        lines.append(text)
        used_bytes += cost
    total = line_number + (_count_lines(handle) if stopped_early else 0)
    return TextWindow(lines, start, total)


def _bounded_lines(handle: BinaryIO) -> Iterator[tuple[bytes, int]]:
    """Each line's first ``LINE_READ_CAP`` bytes, and how many bytes of it were skipped."""
    while raw := handle.readline(LINE_READ_CAP):
        skipped = 0
        if not raw.endswith(b"\n"):
            while chunk := handle.readline(LINE_READ_CAP):
                skipped += len(chunk)
                if chunk.endswith(b"\n"):
                    break
        yield raw, skipped


def _decode_line(raw: bytes, *, first: bool, left_out_bytes: int = 0) -> str:
    text = raw.decode("utf-8", "replace").rstrip("\n").removesuffix("\r")
    if first:
        text = text.removeprefix("\ufeff")
    if left_out_bytes:
        cut = len(text) - MAX_LINE_CHARS
        text = (
            f"{text[:MAX_LINE_CHARS]}… [line truncated: {cut} more characters and "
            f"{format_size(left_out_bytes)} more]"
        )
    elif len(text) > MAX_LINE_CHARS:
        cut = len(text) - MAX_LINE_CHARS
        text = f"{text[:MAX_LINE_CHARS]}… [line truncated: {cut} more characters]"
    return text


def _count_lines(handle: BinaryIO) -> int:
    count = 0
    last = b"\n"
    while chunk := handle.read(1 << 20):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (0 if last == b"\n" else 1)


def _text_result(window: TextWindow, shown: str) -> ToolResult:
    total = window.total_lines
    if window.start_line > max(total, 1):
        raise ToolError(
            f"offset {window.start_line} is beyond the end of {shown}: it has {total} "
            f"line{'s' if total != 1 else ''}."
        )
    details = {
        "path": shown,
        "start_line": window.start_line,
        "end_line": max(window.end_line, 0),
        "total_lines": total,
        "truncated": window.end_line < total,
    }
    if total == 0:
        return ToolResult.text(f"({shown} is empty)", details)
    text = "\n".join(window.lines)
    if window.end_line < total:
        text += (
            f"\n\n[Showing lines {window.start_line}-{window.end_line} of {total}. "
            f"Use offset={window.end_line + 1} to continue.]"
        )
    return ToolResult.text(text, details)


def _image_result(handle: BinaryIO, head: bytes, shown: str, mime_type: str) -> ToolResult:
    rest = handle.read(MAX_IMAGE_BYTES + 1 - len(head))
    data = head + rest
    if len(data) > MAX_IMAGE_BYTES:
        raise ToolError(
            f"{shown} is an image larger than {MAX_IMAGE_BYTES // (1024 * 1024)} MB, too big "
            "to send to the model; make a smaller copy first (e.g. with bash)."
        )
    note = TextContent(f"Read image {shown} [{mime_type}, {format_size(len(data))}]")
    image = ImageContent(base64.b64encode(data).decode("ascii"), mime_type)
    return ToolResult([note, image], {"path": shown, "mime_type": mime_type, "bytes": len(data)})
