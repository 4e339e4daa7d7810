"""grep: search file contents with ripgrep (.gitignore-aware, hidden files but not .git/).

Output lines are ``path:line: text`` for matches and ``path-line- text`` for context, with
``--`` between separate groups when context is asked for.
details: ``{"matches": int, "total_matches": int | None, "truncated": bool}``
(``total_matches`` is None when counting stopped early, past ``MAX_COUNTED_EXTRA``).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from pydantic import Field

from picode.agent.tool import BaseTool, OnUpdate, StrictParams, ToolError, ToolResult
from picode.ai.abort import AbortSignal
from picode.tools._paths import cut_line, display_path, missing_path_error, resolve_path
from picode.tools._rg import COMMON_ARGS, EXCLUDE_GIT, MORE_RESULTS_NOTE, run_rg

DEFAULT_LIMIT = 100
#: Matches past the limit are only counted, and only this far.
MAX_COUNTED_EXTRA = 10_000

DESCRIPTION = f"""\
Search file contents for a regular expression (Rust regex syntax, like PCRE without \
look-around or backreferences) using ripgrep. Set literal=true to search for the text as \
is. Searches path (a folder or file, default: the working folder), skipping files ignored \
by .gitignore and the .git folder; hidden files are searched. glob limits which files are \
searched (e.g. "*.py", "src/**/*.ts"). Each result line is "path:line: text"; with context \
N, the N lines around each match are shown as "path-line- text". At most limit matches \
(default {DEFAULT_LIMIT}) are returned, with a note when there are more."""


class GrepParams(StrictParams):
    pattern: str = Field(description="Regular expression to search for (or text, with literal).")
    path: str | None = Field(
        default=None, description="Folder or file to search (default: the working folder)."
    )
    glob: str | None = Field(
        default=None, description='Only search files matching this glob, e.g. "*.py".'
    )
    ignore_case: bool = Field(default=False, description="Match case-insensitively.")
    literal: bool = Field(default=False, description="Treat pattern as plain text, not a regex.")
    context: int = Field(
        default=0, ge=0, le=50, description="Lines of context to show around each match."
    )
    limit: int = Field(
        default=DEFAULT_LIMIT, ge=1, description="Maximum number of matches to return."
    )


class GrepTool(BaseTool):
    name = "grep"
    read_only = True
    label = "Grep"
    description = DESCRIPTION
    params_model = GrepParams

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    async def run(self, args: GrepParams, signal: AbortSignal, on_update: OnUpdate) -> ToolResult:
        if not args.pattern:
            raise ToolError("The pattern is empty.")
        target = resolve_path(self.cwd, args.path or ".")
        if not target.exists():
            raise missing_path_error(self.cwd, target, what="Path")
        rg_args = ["--json", *COMMON_ARGS]
        if args.ignore_case:
            rg_args.append("--ignore-case")
        if args.literal:
            rg_args.append("--fixed-strings")
        if args.context:
            rg_args.append(f"--context={args.context}")
        if args.glob:
            rg_args.append(f"--glob={args.glob}")
        rg_args += [EXCLUDE_GIT, f"--regexp={args.pattern}", "--", str(target)]
        collector = MatchCollector(self.cwd, args.limit, args.context)
        outcome = await run_rg(rg_args, self.cwd, signal, collector.feed)
        where = display_path(self.cwd, target)
        error = outcome.error_text() if outcome.returncode == 2 else ""
        if not collector.lines:
            if error:
                hint = "" if args.literal else " (set literal=true to search for the text as is)"
                raise ToolError(f"grep failed{hint}: {error}")
            return ToolResult.text(
                f"No matches for {args.pattern!r} in {where}.",
                {"matches": 0, "total_matches": 0, "truncated": False},
            )
        text = "\n".join(collector.lines)
        if collector.extra:
            more = f"{collector.extra}+" if outcome.stopped_early else str(collector.extra)
            text += "\n\n" + MORE_RESULTS_NOTE.format(count=more)
        if outcome.skipped_long_lines:
            text += f"\n[{outcome.skipped_long_lines} extremely long lines were skipped]"
        if error:
            text += f"\n[Some files could not be searched: {error}]"
        details = {
            "matches": collector.matches,
            "total_matches": None if outcome.stopped_early else collector.matches + collector.extra,
            "truncated": collector.extra > 0,
        }
        return ToolResult.text(text, details)


class MatchCollector:
    """Turns rg's JSON lines into output lines, keeping ``limit`` matches and counting the rest."""

    def __init__(self, cwd: Path, limit: int, context: int) -> None:
        self.cwd = cwd
        self.limit = limit
        self.context = context
        self.lines: list[str] = []
        self.matches = 0
        self.extra = 0
        self._last: tuple[str, int] | None = None
        self._last_match_line = 0
        self._shown_paths: dict[str, str] = {}

    def feed(self, raw: bytes) -> bool:
        if self.matches >= self.limit:
            return self._feed_past_limit(raw)
        message = _parse(raw)
        if message is None or message.get("type") not in ("match", "context"):
            return True
        data = message["data"]
        is_match = message["type"] == "match"
        if is_match:
            self.matches += 1
        self._emit(data, is_match)
        return True

    def _feed_past_limit(self, raw: bytes) -> bool:
        if raw.startswith(b'{"type":"match"'):
            self.extra += 1
            return self.extra < MAX_COUNTED_EXTRA
        # After-context of the last shown match is still shown, until another match appears.
        if self.extra == 0 and self._last is not None and raw.startswith(b'{"type":"context"'):
            message = _parse(raw)
            if message is not None:
                data = message["data"]
                path, number = self._path(data), data.get("line_number") or 0
                last_path, last_number = self._last
                after_last_match = number <= self._last_match_line + self.context
                if path == last_path and number == last_number + 1 and after_last_match:
                    self._emit(data, is_match=False)
        return True

    def _emit(self, data: dict[str, Any], is_match: bool) -> None:
        path = self._path(data)
        number = int(data.get("line_number") or 0)
        if self.context and self._last is not None and self._last != (path, number - 1):
            self.lines.append("--")
        text = _text(data.get("lines", {})).rstrip("\n").removesuffix("\r")
        mark = ":" if is_match else "-"
        self.lines.append(f"{path}{mark}{number}{mark} {cut_line(text)}")
        self._last = (path, number)
        if is_match:
            self._last_match_line = number

    def _path(self, data: dict[str, Any]) -> str:
        raw = _text(data.get("path", {}))
        shown = self._shown_paths.get(raw)
        if shown is None:
            shown = self._shown_paths[raw] = display_path(self.cwd, raw)
        return shown


def _parse(raw: bytes) -> dict[str, Any] | None:
    try:
        message = json.loads(raw)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _text(field: dict[str, Any]) -> str:
    """rg sends UTF-8 as ``text`` and anything else base64-encoded as ``bytes``."""
    if "text" in field:
        return str(field["text"])
    if "bytes" in field:
        return base64.b64decode(field["bytes"]).decode("utf-8", "replace")
    return ""
