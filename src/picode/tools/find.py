"""find: list files whose path matches a glob, with ripgrep (.gitignore-aware).

details: ``{"files": int, "total_files": int | None, "truncated": bool}``
(``total_files`` is None when counting stopped early).
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field

from picode.agent.tool import BaseTool, OnUpdate, StrictParams, ToolError, ToolResult
from picode.ai.abort import AbortSignal
from picode.tools._paths import cut_line, display_path, missing_path_error, resolve_path
from picode.tools._rg import COMMON_ARGS, EXCLUDE_GIT, MORE_RESULTS_NOTE, run_rg

DEFAULT_LIMIT = 1000
#: Files past the limit are only counted, and only this far.
MAX_COUNTED_EXTRA = 100_000

DESCRIPTION = f"""\
Find files by glob pattern, e.g. "*.py" (any depth: a pattern without "/" matches file \
names), "src/**/test_*.py" (a pattern with "/" matches paths relative to the searched \
folder), "*.{{ts,tsx}}". Matching is case-sensitive. Lists files only, not folders, \
skipping files ignored by .gitignore and the .git folder; hidden files are included. \
Paths are relative to the working folder, sorted. At most limit paths (default \
{DEFAULT_LIMIT}) are returned, with a note when there are more."""


class FindParams(StrictParams):
    pattern: str = Field(description='Glob to match, e.g. "*.py" or "src/**/*.ts".')
    path: str | None = Field(
        default=None, description="Folder to search in (default: the working folder)."
    )
    limit: int = Field(default=DEFAULT_LIMIT, ge=1, description="Maximum number of paths.")


class FindTool(BaseTool):
    name = "find"
    read_only = True
    label = "Find"
    description = DESCRIPTION
    params_model = FindParams

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    async def run(self, args: FindParams, signal: AbortSignal, on_update: OnUpdate) -> ToolResult:
        if not args.pattern.strip():
            raise ToolError("The pattern is empty; give a glob such as '*.py'.")
        target = resolve_path(self.cwd, args.path or ".")
        if not target.exists():
            raise missing_path_error(self.cwd, target, what="Folder")
        if not target.is_dir():
            raise ToolError(f"{display_path(self.cwd, target)} is a file, not a folder.")
        found: list[str] = []
        extra = 0

        def collect(raw: bytes) -> bool:
            nonlocal extra
            if len(found) < args.limit:
                path = os.fsdecode(raw.rstrip(b"\n"))
                found.append(cut_line(display_path(self.cwd, path)))
                return True
            extra += 1
            return extra < MAX_COUNTED_EXTRA

        rg_args = [
            "--files",
            *COMMON_ARGS,
            f"--glob={args.pattern}",
            EXCLUDE_GIT,
            "--",
            str(target),
        ]
        outcome = await run_rg(rg_args, self.cwd, signal, collect)
        error = outcome.error_text() if outcome.returncode == 2 else ""
        where = display_path(self.cwd, target)
        if not found:
            if error:
                raise ToolError(f"find failed: {error}")
            return ToolResult.text(
                f"No files matching {args.pattern!r} in {where}.",
                {"files": 0, "total_files": 0, "truncated": False},
            )
        text = "\n".join(found)
        if extra:
            more = f"{extra}+" if outcome.stopped_early else str(extra)
            text += "\n\n" + MORE_RESULTS_NOTE.format(count=more)
        if error:
            text += f"\n[Some folders could not be read: {error}]"
        details = {
            "files": len(found),
            "total_files": None if outcome.stopped_early else len(found) + extra,
            "truncated": extra > 0,
        }
        return ToolResult.text(text, details)
