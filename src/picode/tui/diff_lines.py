"""Reading a unified diff the way both the transcript and the exports colour it."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

DiffLineKind: TypeAlias = Literal["file", "add", "del", "hunk", "ctx"]


def diff_line_kind(line: str) -> DiffLineKind:
    # File headers first: "---" and "+++" would otherwise read as a removal and an addition.
    if line.startswith(("+++", "---")):
        return "file"
    if line.startswith("+"):
        return "add"
    if line.startswith("-"):
        return "del"
    if line.startswith("@@"):
        return "hunk"
    return "ctx"


def diff_in(details: Any) -> str | None:
    """The diff an edit or write tool put in its result's details, if any."""
    if isinstance(details, dict):
        diff = details.get("diff")
        if isinstance(diff, str) and diff.strip():
            return diff
    return None
