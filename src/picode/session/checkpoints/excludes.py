"""What a snapshot leaves out besides what git ignores itself, written to the shadow
repository's ``info/exclude``.

- Files larger than the limit, found among the untracked files before ``git add`` (so a
  large new file is never read) and among the changed ones after it (a tracked file that
  grew). Each is re-checked at every snapshot: one that shrank below the limit is taken again.
- Nested git repositories (a folder with its own ``.git``): git would record only their
  commit, so they are left out whole.
- The ignore rules git would not see from the shadow repository: the project repository's
  ``.git/info/exclude``, and when the project is a folder inside a repository, the
  ``.gitignore`` files of the folders above it up to that repository's top.

The file is rewritten only when its content changes: git's untracked cache, which makes a
snapshot of an unchanged tree cheap, is dropped each time it does.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path

_SPECIAL = re.compile(r"([\\*?\[!#])")


def pattern_for(path: str, *, folder: bool = False) -> str | None:
    """An anchored ignore pattern matching exactly ``path``; None if none can (a newline)."""
    if "\n" in path or "\r" in path:
        return None
    escaped = _SPECIAL.sub(r"\\\1", path)
    stripped = escaped.rstrip(" ")
    escaped = stripped + "\\ " * (len(escaped) - len(stripped))
    return "/" + escaped + ("/" if folder else "")


def _read(path: Path) -> str:
    try:
        return path.read_text("utf-8", "surrogateescape")
    except OSError:
        return ""


def inherited_rules(root: Path) -> list[str]:
    """The ignore rules of the repository around ``root`` that git, run on ``root`` alone,
    would not read (see the module docstring)."""
    lines: list[str] = []
    if (root / ".git").exists():
        # The project is a repository's top (a linked worktree's ``.git`` is a file: its
        # info/exclude lives in the main repository, not read here).
        return _read(root / ".git" / "info" / "exclude").splitlines()
    for above in root.parents:
        relative = root.relative_to(above).as_posix()
        for line in _read(above / ".gitignore").splitlines():
            rule = line.strip()
            if not rule or rule.startswith("#"):
                continue
            negated = rule.startswith("!")
            body = rule[1:] if negated else rule
            if "/" not in body.rstrip("/"):
                lines.append(rule)  # a bare name applies at every depth
            elif body.lstrip("/").startswith(relative + "/"):
                lines.append(("!" if negated else "") + "/" + body.lstrip("/")[len(relative) + 1 :])
        if (above / ".git").exists():
            if (above / ".git").is_dir():
                lines += _read(above / ".git" / "info" / "exclude").splitlines()
            break
    else:
        return []  # not inside a repository: no rules from above
    return lines


class Excluded:
    def __init__(self, git_dir: Path, root: Path, max_file_bytes: int) -> None:
        self._state = git_dir / "picode-excluded"
        self._exclude_file = git_dir / "info" / "exclude"
        self._root = root
        self._max = max_file_bytes
        self._large: set[str] = set()
        self._nested: set[str] = set()
        self._loaded = False
        # A store kept inside the project (a PICODE_HOME there) must not be taken into itself.
        self._own: str | None = None
        with contextlib.suppress(ValueError):
            self._own = git_dir.resolve().relative_to(root).as_posix()

    def _load(self) -> None:
        if self._loaded:
            return
        try:
            data = self._state.read_bytes()
        except FileNotFoundError:
            data = b""
        for item in data.split(b"\0"):
            if item[:1] == b"L":
                self._large.add(os.fsdecode(item[1:]))
            elif item[:1] == b"N":
                self._nested.add(os.fsdecode(item[1:]))
        self._loaded = True

    def too_large(self, path: str) -> bool:
        try:
            info = os.lstat(self._root / path)
        except OSError:
            return False
        return stat.S_ISREG(info.st_mode) and info.st_size > self._max

    def _is_nested(self, path: str) -> bool:
        folder = self._root / path
        return not folder.is_symlink() and os.path.lexists(folder / ".git")

    def recheck(self) -> None:
        self._load()
        self._large = {path for path in self._large if self.too_large(path)}
        self._nested = {path for path in self._nested if self._is_nested(path)}

    def consider(self, untracked: Iterable[str]) -> None:
        """Sort the untracked paths git listed: ``dir/`` is a nested repository."""
        for path in untracked:
            if path.endswith("/"):
                if self._is_nested(path.rstrip("/")):
                    self._nested.add(path.rstrip("/"))
            elif self.too_large(path):
                self._large.add(path)

    def add_large(self, paths: Iterable[str]) -> None:
        self._large.update(paths)

    def is_large(self, path: str) -> bool:
        return path in self._large

    def large_paths(self) -> list[str]:
        return sorted(self._large)

    def write(self) -> None:
        lines = ["# written by picode: rules git would not see, and what it leaves out"]
        lines += inherited_rules(self._root)
        if self._own:
            lines.append(pattern_for(self._own, folder=True) or "")
        for path in sorted(self._large):
            lines.append(pattern_for(path) or "")
        for path in sorted(self._nested):
            lines.append(pattern_for(path, folder=True) or "")
        content = ("\n".join(line for line in lines if line) + "\n").encode(
            "utf-8", "surrogateescape"
        )
        state = b"\0".join(
            [b"L" + os.fsencode(p) for p in sorted(self._large)]
            + [b"N" + os.fsencode(p) for p in sorted(self._nested)]
        )
        _replace_if_changed(self._exclude_file, content)
        _replace_if_changed(self._state, state)


def _replace_if_changed(path: Path, content: bytes) -> None:
    with contextlib.suppress(FileNotFoundError):
        if path.read_bytes() == content:
            return
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(path.name + ".tmp")
    temp.write_bytes(content)
    os.replace(temp, path)
