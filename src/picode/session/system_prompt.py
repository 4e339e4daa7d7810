"""The system prompt: picode's default text, project context files and overrides (SPEC §6.4).

``AGENTS.md`` (or ``CLAUDE.md`` where no AGENTS.md exists) is collected from the user config
folder and from every folder from the filesystem root down to the cwd, outermost first, so
the nearest file has the last word. ``.picode/SYSTEM.md`` replaces the default prompt and
``APPEND_SYSTEM.md`` (user config folder or ``.picode/``) is appended.
"""

from __future__ import annotations

import datetime as dt
import platform
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

CONTEXT_FILE_NAMES = ("AGENTS.md", "CLAUDE.md")
MAX_CONTEXT_FILE_BYTES = 256 * 1024

DEFAULT_PROMPT = """\
You are picode, a coding agent working in the user's terminal, inside their project.
You help by reading code, running commands, editing files and explaining what you did.

Available tools:
{tool_list}

How to work:
- Read before you edit: use read (and grep/find/ls to locate code) to understand the context.
- Make focused changes with edit; use write only for new files or complete rewrites.
- Use bash for builds, tests, git and other commands; prefer non-interactive flags.
- After changing code, run the relevant tests or checks when they exist.
- Be concise. Show file paths relative to the project. Do not invent file contents.
- If a request is ambiguous or risky (deleting data, force pushes), ask first."""


@dataclass(slots=True)
class ContextFile:
    path: Path
    content: str


def find_context_files(cwd: Path, config_dir: Path) -> list[ContextFile]:
    found: list[ContextFile] = []
    seen: set[Path] = set()
    user_file = _first_existing(config_dir)
    if user_file is not None:
        found.append(user_file)
        seen.add(user_file.path.resolve())
    resolved = cwd.resolve()
    for folder in [*reversed(resolved.parents), resolved]:
        item = _first_existing(folder)
        if item is not None and item.path.resolve() not in seen:
            seen.add(item.path.resolve())
            found.append(item)
    return found


def _first_existing(folder: Path) -> ContextFile | None:
    for name in CONTEXT_FILE_NAMES:
        path = folder / name
        try:
            if path.is_file():
                data = path.read_bytes()[:MAX_CONTEXT_FILE_BYTES]
                return ContextFile(path, data.decode("utf-8", errors="replace"))
        except OSError:
            continue
    return None


def _read_optional(*paths: Path) -> str | None:
    for path in paths:
        try:
            if path.is_file():
                return path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue
    return None


def build_system_prompt(
    *,
    cwd: Path,
    config_dir: Path,
    tools: Sequence[tuple[str, str]],
    override: str | None = None,
    append: str | None = None,
    today: dt.date | None = None,
    project_trusted: bool = False,
) -> str:
    """``tools`` is (name, one-line summary) for each tool the model may call; an untrusted
    project may append to the prompt (context) but not replace it."""
    project = cwd / ".picode"
    base = override or (_read_optional(project / "SYSTEM.md") if project_trusted else None)
    if base is None:
        tool_list = (
            "\n".join(f"- {name}: {summary}" for name, summary in tools) or "- (none enabled)"
        )
        base = DEFAULT_PROMPT.format(tool_list=tool_list)
    parts = [base]
    context_files = find_context_files(cwd, config_dir)
    if context_files:
        sections = [
            f"## {item.path}\n\n{item.content.strip()}" for item in context_files if item.content
        ]
        parts.append("# Project context\n\n" + "\n\n".join(sections))
    for extra in (
        _read_optional(config_dir / "APPEND_SYSTEM.md"),
        _read_optional(project / "APPEND_SYSTEM.md"),
        append,
    ):
        if extra:
            parts.append(extra.strip())
    date = (today or dt.date.today()).isoformat()
    parts.append(
        f"Current date: {date}\nCurrent working directory: {cwd}\nPlatform: {platform.system()}"
    )
    return "\n\n".join(parts)


def first_line(text: str) -> str:
    for line in text.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""
