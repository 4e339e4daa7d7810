"""write: create or overwrite a file atomically, creating parent folders.

details: ``{"path": str, "bytes": int, "lines": int, "created": bool}``.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from picode.agent.tool import BaseTool, OnUpdate, StrictParams, ToolError, ToolResult
from picode.ai.abort import AbortSignal
from picode.tools._paths import display_path, resolve_path
from picode.tools.file_access import DISK, FileAccess

DESCRIPTION = """\
Write content to a file, replacing it entirely if it exists and creating it (and any missing \
parent folders) if not. The write is atomic: the file is never left half-written. Use edit \
for changes to part of an existing file; use write for new files or complete rewrites."""


class WriteParams(StrictParams):
    path: str = Field(description="File to write, relative to the working folder or absolute.")
    content: str = Field(description="The complete new content of the file.")


class WriteTool(BaseTool):
    name = "write"
    label = "Write"
    description = DESCRIPTION
    params_model = WriteParams

    def __init__(self, cwd: Path, files: FileAccess = DISK) -> None:
        self.cwd = cwd
        self.files = files

    async def run(self, args: WriteParams, signal: AbortSignal, on_update: OnUpdate) -> ToolResult:
        path = resolve_path(self.cwd, args.path)
        shown = display_path(self.cwd, path)
        if path.is_dir():
            raise ToolError(f"{shown} is a directory; give a file path to write.")
        data = args.content.encode("utf-8", "replace")
        created = await self.files.write(path, data)
        lines = count_lines(args.content)
        verb = "Created" if created else "Wrote"
        return ToolResult.text(
            f"{verb} {shown}: {len(data)} bytes, {lines} line{'s' if lines != 1 else ''}.",
            {"path": shown, "bytes": len(data), "lines": lines, "created": created},
        )


def count_lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)
