"""Path handling shared by the tools: resolve against the session's cwd, show paths short,
and explain a missing path with useful hints instead of a bare "not found"."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from picode.agent.tool import ToolError

#: Longest line any tool puts in front of the model; longer ones are cut with a marker.
MAX_OUTPUT_LINE_CHARS = 500


def resolve_path(cwd: Path, raw: str) -> Path:
    """Absolute, normalised path for ``raw``: ``~`` expands, relative means relative to cwd."""
    text = raw.strip()
    if not text:
        raise ToolError("The path is empty; give a file or folder path.")
    # Models often copy the "@file" mention syntax from the prompt.
    if text.startswith("@") and len(text) > 1:
        text = text[1:]
    expanded = os.path.expanduser(text)
    joined = expanded if os.path.isabs(expanded) else os.path.join(cwd, expanded)
    return Path(os.path.normpath(joined))


def display_path(cwd: Path, path: Path | str) -> str:
    """``path`` relative to cwd when it lies inside it (``.`` for cwd), else absolute."""
    absolute = os.path.normpath(os.path.join(cwd, path))
    base = os.path.normpath(cwd)
    if absolute == base:
        return "."
    if absolute.startswith(base.rstrip(os.sep) + os.sep):
        return Path(os.path.relpath(absolute, base)).as_posix()
    return absolute


def cut_line(text: str, max_chars: int = MAX_OUTPUT_LINE_CHARS) -> str:
    if len(text) <= max_chars:
        return text
    return f"{text[:max_chars]}… [{len(text) - max_chars} more chars]"


def missing_path_error(cwd: Path, path: Path, *, what: str = "File") -> ToolError:
    """A ToolError for a path that does not exist, naming close names in its folder."""
    shown = display_path(cwd, path)
    parent = path.parent
    if not parent.is_dir():
        existing = parent
        while not existing.is_dir() and existing != existing.parent:
            existing = existing.parent
        return ToolError(
            f"{what} not found: {shown} (folder {display_path(cwd, parent)} does not exist; "
            f"the nearest existing folder is {display_path(cwd, existing)})."
        )
    hint = _close_names_hint(cwd, parent, path.name)
    return ToolError(f"{what} not found: {shown}.{hint}")


def _close_names_hint(cwd: Path, folder: Path, name: str) -> str:
    try:
        with os.scandir(folder) as entries:
            names = [entry.name for entry in entries]
    except OSError:
        return ""
    lowered = {candidate.lower(): candidate for candidate in names}
    matches: list[str] = []
    if name.lower() in lowered:
        matches.append(lowered[name.lower()])
    for candidate in difflib.get_close_matches(name, names, n=3, cutoff=0.6):
        if candidate not in matches:
            matches.append(candidate)
    if not matches:
        return f" No similar names in {display_path(cwd, folder)}; use ls or find to look."
    shown = ", ".join(display_path(cwd, folder / match) for match in matches[:3])
    return f" Did you mean: {shown}?"
