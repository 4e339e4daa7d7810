"""edit: replace exact text in an existing file (one replacement or several, all or nothing).

details: ``{"diff": str, "path": str, "first_changed_line": int, "replacements": int,
"fuzzy": bool}`` (``fuzzy``: at least one edit matched only after normalisation).
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import BinaryIO

from pydantic import Field

from picode.agent.tool import (
    BaseTool,
    OnUpdate,
    StreamingCheck,
    StrictParams,
    ToolError,
    ToolResult,
)
from picode.ai.abort import AbortSignal
from picode.tools._diff import unified_diff
from picode.tools._files import Decoded
from picode.tools._fuzzy import MAX_REPORTED_MATCHES, closest_candidates, find_matches
from picode.tools._paths import cut_line, display_path, missing_path_error, resolve_path
from picode.tools.edit_check import EditStreamCheck, NoStreamCheck
from picode.tools.file_access import DISK, DiskFiles, FileAccess

DESCRIPTION = """\
Edit an existing file by replacing old_text with new_text. old_text must match exactly one \
place in the file, including indentation and line breaks: copy it from the file as read, and \
include enough surrounding lines to make it unique. Small differences in trailing whitespace, \
line endings and typographic quotes/dashes are forgiven. To make several changes to one file \
in one call, pass edits: [{old_text, new_text}, ...] instead; each old_text is matched \
against the original file, they must not overlap, and either all apply or none. The file's \
line endings (LF/CRLF) and byte-order mark are kept. Returns a unified diff. Use write to \
create files."""


class Replacement(StrictParams):
    old_text: str = Field(description="Exact text to replace (must match one place).")
    new_text: str = Field(description="Text to put in its place.")


class EditParams(StrictParams):
    path: str = Field(description="File to edit, relative to the working folder or absolute.")
    old_text: str | None = Field(
        default=None, description="Exact text to replace (must match one place)."
    )
    new_text: str | None = Field(default=None, description="Text to put in its place.")
    edits: list[Replacement] | None = Field(
        default=None,
        description="Several replacements in one call, instead of old_text/new_text.",
    )


class EditTool(BaseTool):
    name = "edit"
    label = "Edit"
    description = DESCRIPTION
    params_model = EditParams

    def __init__(self, cwd: Path, files: FileAccess = DISK) -> None:
        self.cwd = cwd
        self.files = files

    def streaming_check(self) -> StreamingCheck:
        # The check reads the disk; files held elsewhere (an editor's buffers) may differ.
        if not isinstance(self.files, DiskFiles):
            return NoStreamCheck()
        return EditStreamCheck(self.cwd)

    async def run(self, args: EditParams, signal: AbortSignal, on_update: OnUpdate) -> ToolResult:
        replacements = _replacements(args)
        path = resolve_path(self.cwd, args.path)
        shown = display_path(self.cwd, path)
        if path.is_dir():
            raise ToolError(f"{shown} is a directory; edit changes files.")
        if not path.exists():
            error = missing_path_error(self.cwd, path)
            raise ToolError(f"{error} edit changes existing files; use write to create one.")
        try:
            handle = await self.files.open_read(path)
            data = await asyncio.to_thread(_read_all, handle)
        except OSError as exc:
            raise ToolError(f"Cannot read {shown}: {exc.strerror or exc}.") from None
        encoded, result = await asyncio.to_thread(_apply, data, shown, replacements)
        await self.files.write(path, encoded)
        return result


def _read_all(handle: BinaryIO) -> bytes:
    with handle:
        return handle.read()


def _apply(
    data: bytes, shown: str, replacements: list[tuple[str, str, str]]
) -> tuple[bytes, ToolResult]:
    """The file's new bytes and the result to report once they are written."""
    decoded = Decoded.from_bytes(data, shown)
    original = decoded.text
    planned: list[tuple[int, int, str, str]] = []
    fuzzy = False
    for label, old_text, new_text in replacements:
        start, end, was_fuzzy = _locate(original, shown, label, old_text, decoded.crlf)
        fuzzy = fuzzy or was_fuzzy
        planned.append((start, end, new_text, label))
    planned.sort()
    for (_, end, _, first), (start, _, _, second) in itertools.pairwise(planned):
        if start < end:
            raise ToolError(
                f"{first} and {second} overlap in {shown}; merge them into one edit. "
                "Nothing was changed."
            )
    pieces: list[str] = []
    position = 0
    for start, end, new_text, _ in planned:
        pieces += [original[position:start], _normalize_newlines(new_text, decoded.crlf)]
        position = end
    pieces.append(original[position:])
    updated = "".join(pieces)
    if updated == original:
        raise ToolError(f"The edit would not change {shown}; nothing was written.")
    diff, first_changed = unified_diff(original, updated, shown)
    count = len(planned)
    summary = f"Edited {shown}: {count} replacement{'s' if count != 1 else ''}"
    if fuzzy:
        summary += " (matched after normalising whitespace/quotes)"
    details = {
        "diff": diff,
        "path": shown,
        "first_changed_line": first_changed or 1,
        "replacements": count,
        "fuzzy": fuzzy,
    }
    return decoded.encode(updated), ToolResult.text(f"{summary}.\n\n{diff}".rstrip("\n"), details)


def _replacements(args: EditParams) -> list[tuple[str, str, str]]:
    """(label, old_text, new_text) for every requested replacement, checked for sense."""
    if args.edits is not None:
        if args.old_text is not None or args.new_text is not None:
            raise ToolError("Give either old_text/new_text or edits, not both.")
        if not args.edits:
            raise ToolError("edits is empty; give at least one {old_text, new_text}.")
        items = [
            (f"edits[{index}]", item.old_text, item.new_text)
            for index, item in enumerate(args.edits)
        ]
    else:
        if args.old_text is None or args.new_text is None:
            missing = " and ".join(
                name for name in ("old_text", "new_text") if getattr(args, name) is None
            )
            raise ToolError(f"{missing} required (or edits: [{{old_text, new_text}}, ...]).")
        items = [("old_text", args.old_text, args.new_text)]
    for label, old_text, new_text in items:
        if not old_text:
            raise ToolError(f"{label}: old_text is empty; to create or overwrite a file use write.")
        if old_text == new_text:
            raise ToolError(f"{label}: old_text and new_text are identical; nothing to change.")
    return items


def _normalize_newlines(text: str, crlf: bool) -> str:
    return text.replace("\r\n", "\n") if crlf else text


def _locate(
    content: str, shown: str, label: str, old_text: str, crlf: bool
) -> tuple[int, int, bool]:
    matches = find_matches(content, _normalize_newlines(old_text, crlf))
    if len(matches.spans) == 1:
        start, end = matches.spans[0]
        return start, end, matches.fuzzy
    prefix = "" if label == "old_text" else f"{label}: "
    if not matches.spans:
        raise ToolError(prefix + _no_match_message(content, shown, old_text))
    lines = [content.count("\n", 0, start) + 1 for start, _ in matches.spans]
    more = "+" if len(lines) >= MAX_REPORTED_MATCHES else ""
    raise ToolError(
        f"{prefix}old_text matches {len(lines)}{more} places in {shown} (lines "
        f"{', '.join(map(str, lines[:20]))}{', ...' if len(lines) > 20 else ''}). Include more "
        "surrounding lines so it matches exactly one. Nothing was changed."
    )


def _no_match_message(content: str, shown: str, old_text: str) -> str:
    message = f"old_text was not found in {shown}."
    candidates = closest_candidates(content, old_text)
    if candidates:
        message += " Closest text in the file:"
        for candidate in candidates:
            last = candidate.first_line + len(candidate.lines) - 1
            first = candidate.first_line
            where = f"line {first}" if last == first else f"lines {first}-{last}"
            message += f"\n\n{where} ({candidate.similarity:.0%} similar):"
            for offset, line in enumerate(candidate.lines[:12]):
                message += f"\n{candidate.first_line + offset:>6}  {cut_line(line, 200)}"
            if len(candidate.lines) > 12:
                message += f"\n        ... {len(candidate.lines) - 12} more lines"
    message += "\n\nRead the file again and copy old_text exactly. Nothing was changed."
    return message
