"""ls: list one folder's entries, sorted, folders marked with a trailing "/".

details: ``{"path": str, "entries": int, "total_entries": int, "truncated": bool}``.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pydantic import Field

from picode.agent.tool import BaseTool, OnUpdate, StrictParams, ToolError, ToolResult
from picode.ai.abort import AbortSignal
from picode.tools._paths import cut_line, display_path, missing_path_error, resolve_path

DEFAULT_LIMIT = 500

DESCRIPTION = f"""\
List the entries of a folder (default: the working folder), sorted by name, folders \
marked with a trailing "/". Hidden entries (dotfiles) are included; nothing is filtered \
by .gitignore. At most limit entries (default {DEFAULT_LIMIT}) are returned, with a note \
when there are more. Use find to search recursively."""


class LsParams(StrictParams):
    path: str | None = Field(
        default=None, description="Folder to list (default: the working folder)."
    )
    limit: int = Field(default=DEFAULT_LIMIT, ge=1, description="Maximum number of entries.")


class LsTool(BaseTool):
    name = "ls"
    read_only = True
    label = "List"
    description = DESCRIPTION
    params_model = LsParams

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    async def run(self, args: LsParams, signal: AbortSignal, on_update: OnUpdate) -> ToolResult:
        target = resolve_path(self.cwd, args.path or ".")
        shown = display_path(self.cwd, target)
        if not target.exists():
            raise missing_path_error(self.cwd, target, what="Folder")
        if not target.is_dir():
            raise ToolError(f"{shown} is a file, not a folder; use read to see its content.")
        names = await asyncio.to_thread(_entries, target, shown)
        details = {
            "path": shown,
            "entries": min(len(names), args.limit),
            "total_entries": len(names),
            "truncated": len(names) > args.limit,
        }
        if not names:
            return ToolResult.text(f"({shown} is empty)", details)
        text = "\n".join(cut_line(name) for name in names[: args.limit])
        if len(names) > args.limit:
            text += (
                f"\n\n[{len(names) - args.limit} more results not shown; raise limit to see them]"
            )
        return ToolResult.text(text, details)


def _entries(folder: Path, shown: str) -> list[str]:
    try:
        with os.scandir(folder) as scan:
            entries = [entry.name + ("/" if _is_dir(entry) else "") for entry in scan]
    except PermissionError:
        raise ToolError(f"Cannot list {shown}: permission denied.") from None
    except OSError as exc:
        raise ToolError(f"Cannot list {shown}: {exc.strerror or exc}.") from None
    entries.sort(key=lambda name: (name.lower(), name))
    return entries


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False
