"""What a restore would do (``RestorePlan``) and what it did (``RestoreReport``).

A plan is data: it is made without writing anything, shown to the user, and handed back to
``CheckpointStore.restore``. Paths are relative to the project root, with ``/`` separators,
exactly as the files are named (untrusted text: pass them through ``picode.ai.untrusted``
before they reach a terminal).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

#: ``write``: the file differs from the checkpoint and gets its content back; ``recreate``: it
#: was deleted since and is written again; ``delete``: it was created since and is removed.
Action = Literal["write", "recreate", "delete"]

#: git's mode of a symbolic link and of a nested repository's commit in a tree.
LINK_MODE = "120000"
GITLINK_MODE = "160000"


@dataclass(frozen=True, slots=True)
class PathChange:
    path: str
    action: Action
    #: Lines the restore adds and removes (a diff summary); None for a binary file.
    added: int | None
    removed: int | None
    #: The checkpoint's mode and blob ("" for ``delete``), the blob found when planning ("" for
    #: ``recreate``): the restore checks the file still holds it before changing it.
    mode: str = ""
    blob: str = ""
    current_mode: str = ""
    current_blob: str = ""


@dataclass(frozen=True, slots=True)
class KeptPath:
    """A path that differs from the checkpoint but that a restore leaves alone, and why."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class RestorePlan:
    root: Path
    checkpoint: str
    tree: str
    current_tree: str
    changes: tuple[PathChange, ...]
    kept: tuple[KeptPath, ...] = ()

    def by_action(self, action: Action) -> list[str]:
        return [change.path for change in self.changes if change.action == action]

    @property
    def modified(self) -> list[str]:
        return self.by_action("write")

    @property
    def recreated(self) -> list[str]:
        """Deleted since the checkpoint: a restore writes them again."""
        return self.by_action("recreate")

    @property
    def deleted(self) -> list[str]:
        """Created since the checkpoint: a restore removes them."""
        return self.by_action("delete")

    @property
    def lines_added(self) -> int:
        return sum(change.added or 0 for change in self.changes)

    @property
    def lines_removed(self) -> int:
        return sum(change.removed or 0 for change in self.changes)

    @property
    def empty(self) -> bool:
        return not self.changes


@dataclass(slots=True)
class RestoreReport:
    written: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    #: (path, reason) for each path left as it was because changing it failed or was unsafe.
    failed: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed


@dataclass(frozen=True, slots=True)
class _Raw:
    old_mode: str
    new_mode: str
    old_blob: str
    new_blob: str
    status: str


def parse_diff(output: bytes) -> list[PathChange]:
    """``git diff-tree -r -z --no-renames --raw --numstat CURRENT CHECKPOINT``: the change of
    each path from now back to the checkpoint."""
    fields = output.split(b"\0")
    raw: dict[str, _Raw] = {}
    counts: dict[str, tuple[int | None, int | None]] = {}
    i = 0
    while i < len(fields):
        head = fields[i]
        if not head:
            i += 1
            continue
        if head.startswith(b":"):
            old_mode, new_mode, old_blob, new_blob, status = head[1:].decode().split(" ")
            path = os.fsdecode(fields[i + 1])
            raw[path] = _Raw(old_mode, new_mode, old_blob, new_blob, status[:1])
            i += 2
            continue
        plus, minus, path_bytes = head.split(b"\t", 2)
        counts[os.fsdecode(path_bytes)] = (
            None if plus == b"-" else int(plus),
            None if minus == b"-" else int(minus),
        )
        i += 1
    changes: list[PathChange] = []
    for path, entry in raw.items():
        added, removed = counts.get(path, (None, None))
        action: Action = {"A": "recreate", "D": "delete"}.get(entry.status, "write")  # type: ignore[assignment]
        changes.append(
            PathChange(
                path=path,
                action=action,
                added=added,
                removed=removed,
                mode="" if action == "delete" else entry.new_mode,
                blob="" if action == "delete" else entry.new_blob,
                current_mode="" if action == "recreate" else entry.old_mode,
                current_blob="" if action == "recreate" else entry.old_blob,
            )
        )
    return changes
