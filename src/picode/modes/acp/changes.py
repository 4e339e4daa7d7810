"""What write and edit calls change, as ACP diffs (the file's text before and after).

The text before is read when the call is announced, which is before it is approved or run;
the text after once it has run. Both go through the same file access as the tools, so with
an editor's file system the diff is of its buffers.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from acp import helpers
from acp.schema import FileEditToolCallContent

from picode.agent.tool import ToolError
from picode.tools import FileAccess
from picode.tools._paths import resolve_path

#: Tools whose calls change one file named by their ``path`` argument.
CHANGING_TOOLS = frozenset({"write", "edit"})
#: Larger files get no diff: a client renders both texts in full.
MAX_DIFF_CHARS = 1_000_000


@dataclass(slots=True)
class Before:
    path: Path
    name: str
    args: dict[str, Any]
    #: None: the file did not exist (or could not be read as text).
    text: str | None


class FileChanges:
    def __init__(self, files: FileAccess, cwd: Path) -> None:
        self.files = files
        self.cwd = cwd
        self._before: dict[str, Before] = {}

    async def remember(self, call_id: str, name: str, args: dict[str, Any]) -> None:
        path = target_path(self.cwd, name, args)
        if path is not None:
            self._before[call_id] = Before(path, name, args, await self._text(path))

    def proposed(self, call_id: str) -> list[FileEditToolCallContent] | None:
        """The change a call asks for, to show while the person decides."""
        before = self._before.get(call_id)
        if before is None:
            return None
        new = _planned_text(before)
        if new is None or new == before.text:
            return None
        return [helpers.tool_diff_content(str(before.path), new, before.text)]

    async def made(self, call_id: str) -> list[FileEditToolCallContent] | None:
        """The change a finished call made (None if it changed nothing readable)."""
        before = self._before.pop(call_id, None)
        if before is None:
            return None
        after = await self._text(before.path)
        if after is None or after == before.text:
            return None
        return [helpers.tool_diff_content(str(before.path), after, before.text)]

    def forget(self, call_id: str) -> None:
        self._before.pop(call_id, None)

    async def _text(self, path: Path) -> str | None:
        if not await asyncio.to_thread(path.exists):
            return None
        try:
            handle = await self.files.open_read(path)
        except (OSError, ToolError):
            return None
        data = await asyncio.to_thread(_read_capped, handle)
        if len(data) > MAX_DIFF_CHARS or b"\x00" in data:
            return None
        return data.decode("utf-8", "replace")


def _read_capped(handle: BinaryIO) -> bytes:
    with handle:
        return handle.read(MAX_DIFF_CHARS + 1)


def target_path(cwd: Path, name: str, args: Any) -> Path | None:
    if name not in CHANGING_TOOLS or not isinstance(args, dict):
        return None
    raw = args.get("path")
    if not isinstance(raw, str):
        return None
    try:
        return resolve_path(cwd, raw)
    except ToolError:
        return None


def _planned_text(before: Before) -> str | None:
    """The file as the call would leave it; None when that needs the tool's own matching
    (an edit whose old text is not found exactly once)."""
    args = before.args
    if before.name == "write":
        content = args.get("content")
        return content if isinstance(content, str) else None
    text = before.text
    if text is None:
        return None
    edits = args.get("edits")
    if not isinstance(edits, list):
        edits = [{"old_text": args.get("old_text"), "new_text": args.get("new_text")}]
    for edit in edits:
        old = edit.get("old_text") if isinstance(edit, dict) else None
        new = edit.get("new_text") if isinstance(edit, dict) else None
        if not isinstance(old, str) or not isinstance(new, str) or text.count(old) != 1:
            return None
        text = text.replace(old, new)
    return text
