"""The system prompt: picode's default text, project context files and overrides
(docs/configuration.md).

``AGENTS.md`` (or ``CLAUDE.md`` where no AGENTS.md exists) is collected from the user config
folder and from every folder from the filesystem root down to the cwd, outermost first, so
the nearest file has the last word. ``.picode/SYSTEM.md`` replaces the default prompt and
``APPEND_SYSTEM.md`` (user config folder or ``.picode/``) is appended.

A repository decides what its files are, not what they point to: a context file that is a
link leaving the project (the user's own: leaving the config folder) is left out with a
notice, so ``AGENTS.md -> ~/.ssh/id_rsa`` never reaches the model. Each file is read up to
``MAX_CONTEXT_FILE_BYTES``, never whole.
"""

from __future__ import annotations

import datetime as dt
import platform
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from picode.agent.tool import AgentTool
    from picode.session.options import SessionOptions
    from picode.session.skills.discovery import Skill

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


def find_context_files(
    cwd: Path, config_dir: Path, problems: list[str] | None = None
) -> list[ContextFile]:
    """``problems`` collects why a file was cut short or left out."""
    notes = problems if problems is not None else []
    found: list[ContextFile] = []
    seen: set[Path] = set()
    user_file = _first_existing(config_dir, config_dir, notes)
    if user_file is not None:
        found.append(user_file)
        seen.add(user_file.path.resolve())
    resolved = cwd.resolve()
    root = project_root(resolved)
    for folder in [*reversed(resolved.parents), resolved]:
        # Inside the project a file may only point within it; above it (the person's own
        # folders) within the folder it was found in.
        bound = root if folder.is_relative_to(root) else folder
        item = _first_existing(folder, bound, notes)
        if item is not None and item.path.resolve() not in seen:
            seen.add(item.path.resolve())
            found.append(item)
    return found


def project_root(cwd: Path) -> Path:
    """The repository ``cwd`` is in (nearest folder holding ``.git``), else ``cwd``."""
    for folder in [cwd, *cwd.parents]:
        if (folder / ".git").exists():
            return folder
    return cwd


def _first_existing(folder: Path, bound: Path, problems: list[str]) -> ContextFile | None:
    for name in CONTEXT_FILE_NAMES:
        path = folder / name
        text = read_bounded(path, bound, problems)
        if text is not None:
            return ContextFile(path, text)
    return None


def read_bounded(path: Path, bound: Path, problems: list[str]) -> str | None:
    """At most ``MAX_CONTEXT_FILE_BYTES`` of ``path``, None when absent or refused: a
    file (or link) whose real place is outside ``bound`` is left out, with a problem."""
    try:
        if not path.is_file():
            return None
        real = path.resolve()
        if not real.is_relative_to(bound.resolve()):
            problems.append(
                f"{path} was not read: it is a link to {real}, outside {bound}. "
                "Copy the file there if it is meant as context."
            )
            return None
        with real.open("rb") as handle:
            data = handle.read(MAX_CONTEXT_FILE_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_CONTEXT_FILE_BYTES:
        data = data[:MAX_CONTEXT_FILE_BYTES]
        problems.append(
            f"{path} is larger than {MAX_CONTEXT_FILE_BYTES // 1024} kB; only its first "
            f"{MAX_CONTEXT_FILE_BYTES // 1024} kB are in the system prompt."
        )
    return data.decode("utf-8", errors="replace")


def _read_optional(path: Path, bound: Path, problems: list[str]) -> str | None:
    text = read_bounded(path, bound, problems)
    return text.strip() if text is not None else None


def build_system_prompt(
    *,
    cwd: Path,
    config_dir: Path,
    tools: Sequence[tuple[str, str]],
    override: str | None = None,
    append: str | None = None,
    today: dt.date | None = None,
    project_trusted: bool = False,
    problems: list[str] | None = None,
    skills: str | None = None,
) -> str:
    """``tools`` is (name, one-line summary) for each tool the model may call; an untrusted
    project may append to the prompt (context) but not replace it. ``problems`` collects
    the files cut short or left out (``read_bounded``). ``skills`` is the block listing the
    skills (``picode.session.skills.skills_prompt``)."""
    notes = problems if problems is not None else []
    project = cwd / ".picode"
    root = project_root(cwd.resolve())
    base = override or None
    if base is None and project_trusted:
        # Trusted: the person accepted where its links point (the trust question named them).
        system = project / "SYSTEM.md"
        base = _read_optional(system, system.resolve().parent, notes)
    if base is None:
        tool_list = (
            "\n".join(f"- {name}: {summary}" for name, summary in tools) or "- (none enabled)"
        )
        base = DEFAULT_PROMPT.format(tool_list=tool_list)
    parts = [base]
    context_files = find_context_files(cwd, config_dir, notes)
    if context_files:
        sections = [
            f"## {item.path}\n\n{item.content.strip()}" for item in context_files if item.content
        ]
        parts.append("# Project context\n\n" + "\n\n".join(sections))
    if skills:
        parts.append(skills)
    for extra in (
        _read_optional(config_dir / "APPEND_SYSTEM.md", config_dir, notes),
        _read_optional(project / "APPEND_SYSTEM.md", root, notes),
        append,
    ):
        if extra:
            parts.append(extra.strip())
    date = (today or dt.date.today()).isoformat()
    parts.append(
        f"Current date: {date}\nCurrent working directory: {cwd}\nPlatform: {platform.system()}"
    )
    return "\n\n".join(parts)


def session_system_prompt(
    options: SessionOptions, tools: Sequence[AgentTool], skills: Sequence[Skill]
) -> tuple[str, list[str]]:
    """The prompt a session opens with, from its options, tools and skills; and what to
    tell the person (context files cut short or left out)."""
    from picode.session.skills import skills_prompt

    summaries = [(tool.name, first_line(tool.description)) for tool in tools]
    problems: list[str] = []
    prompt = build_system_prompt(
        cwd=options.cwd,
        config_dir=options.paths.config_dir,
        tools=summaries,
        override=options.system_prompt,
        append=options.append_system_prompt,
        project_trusted=options.project_trusted,
        problems=problems,
        skills=skills_prompt(skills, dict(summaries)),
    )
    return prompt, problems


def first_line(text: str) -> str:
    for line in text.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""
