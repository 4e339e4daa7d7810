"""Shared by the checkpoint tests: a project folder, a store outside it, and real git."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from picode.session.checkpoints import CheckpointStore

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


class Project:
    def __init__(self, base: Path, **options: int) -> None:
        self.root = base / "project"
        self.root.mkdir()
        self.store_dir = base / "store"
        self.store = CheckpointStore(self.root, self.store_dir, **options)

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def read(self, relative: str) -> str:
        return (self.root / relative).read_text(encoding="utf-8")

    def sh(self, command: str) -> None:
        """A change made the way a bash tool makes it: by another process."""
        subprocess.run(["sh", "-c", command], cwd=self.root, check=True, timeout=30)

    def git(self, *args: str) -> str:
        """The user's own git, on the project's own repository."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_AUTHOR_NAME="user",
            GIT_AUTHOR_EMAIL="user@example.com",
            GIT_COMMITTER_NAME="user",
            GIT_COMMITTER_EMAIL="user@example.com",
        )
        done = subprocess.run(
            ["git", *args], cwd=self.root, env=env, capture_output=True, check=True, timeout=30
        )
        return done.stdout.decode()


def tree_bytes(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes (links as their target)."""
    found: dict[str, bytes] = {}
    for path in sorted(folder.rglob("*")):
        key = path.relative_to(folder).as_posix()
        if path.is_symlink():
            found[key] = b"-> " + os.fsencode(os.readlink(path))
        elif path.is_file():
            found[key] = path.read_bytes()
    return found
