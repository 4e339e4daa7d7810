"""Unified diffs of an edit, computed on the changed region only (edits in big files)."""

from __future__ import annotations

import difflib
import re

_HUNK_HEADER = re.compile(r"^@@ -(\d+)((?:,\d+)?) \+(\d+)((?:,\d+)?) @@")


def unified_diff(old: str, new: str, label: str, context: int = 3) -> tuple[str, int | None]:
    """The diff text and the first changed line (1-based, in the new text), or ("", None)."""
    before = old.splitlines(keepends=True)
    after = new.splitlines(keepends=True)
    prefix = 0
    while prefix < min(len(before), len(after)) and before[prefix] == after[prefix]:
        prefix += 1
    if prefix == len(before) == len(after):
        return "", None
    suffix = 0
    while (
        suffix < min(len(before), len(after)) - prefix and before[-1 - suffix] == after[-1 - suffix]
    ):
        suffix += 1
    # Only the changed region plus its context is handed to difflib; headers are shifted back.
    skip = max(0, prefix - context)
    keep_tail = max(0, suffix - context)
    body = difflib.unified_diff(
        before[skip : len(before) - keep_tail],
        after[skip : len(after) - keep_tail],
        f"a/{label}",
        f"b/{label}",
        n=context,
    )
    lines: list[str] = []
    for line in body:
        match = _HUNK_HEADER.match(line)
        if match:
            old_start, old_len, new_start, new_len = match.groups()
            line = (
                f"@@ -{int(old_start) + skip}{old_len} +{int(new_start) + skip}{new_len} @@"
                f"{line[match.end() :]}"
            )
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        lines.append(line)
    return "".join(lines), prefix + 1
