"""What the sandbox lets a command do, independent of the mechanism that enforces it.

One policy for bubblewrap (Linux) and Seatbelt (macOS): the whole file system readable, the
project folder, the temp folder and configured extra paths writable; inside them picode's
own folders, ``.picode/``, ``.git/hooks`` and ``.git/config`` stay read-only; shell start-up
files are never writable; secrets folders are hidden; no network unless allowed.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from picode.agent.home_paths import KEY_LOCATIONS, SHELL_STARTUP_FILES

#: Inside the project: what would run code or change what picode trusts next time.
PROJECT_READ_ONLY = (".picode", ".git/hooks", ".git/config")


@dataclass(frozen=True, slots=True)
class SandboxConfig:
    """The user's settings plus picode's own folders, as the launcher resolved them."""

    enabled: bool = True
    network: bool = False
    #: Extra writable paths from config (``[sandbox] writable``), absolute.
    writable: tuple[Path, ...] = ()
    #: picode's config, data and cache folders: never writable from inside.
    protected: tuple[Path, ...] = ()
    #: Files to hide besides the secrets folders (picode's own credentials file).
    secret_files: tuple[Path, ...] = ()
    #: ``!cmd`` typed by the user runs sandboxed too.
    user_commands: bool = False
    #: Hosts a sandboxed command may reach when ``network`` is off (proxy.py).
    allow_hosts: tuple[str, ...] = ()
    home: Path = field(default_factory=Path.home)


@dataclass(frozen=True, slots=True)
class Layout:
    """The paths for one command, resolved and existing (a bind needs an existing source)."""

    writable: tuple[Path, ...]
    read_only: tuple[Path, ...]
    hidden_folders: tuple[Path, ...]
    hidden_files: tuple[Path, ...]
    network: bool
    #: The allowlist proxy's socket, when ``allow_hosts`` applies (no network otherwise).
    proxy: Path | None = None


def temp_folders() -> list[Path]:
    """``/tmp`` and ``$TMPDIR`` (what ``tempfile`` uses), resolved, without repeats."""
    found = [Path("/tmp"), Path(tempfile.gettempdir())]
    if os.environ.get("TMPDIR"):
        found.append(Path(os.environ["TMPDIR"]))
    return _existing(found)


def layout(config: SandboxConfig, cwd: Path, *, network: bool, proxy: Path | None = None) -> Layout:
    """The paths for a command in ``cwd``. Read-only paths must exist to be bound: a
    ``.git`` without ``hooks`` gets the (empty) folder git itself would have made, so no
    hook can be planted; a missing ``.picode/`` may be created (trust then asks again)."""
    git = cwd / ".git"
    if git.is_dir() and not (git / "hooks").exists():
        with contextlib.suppress(OSError):
            (git / "hooks").mkdir()
    writable = _existing([cwd, *temp_folders(), *config.writable])
    home = config.home
    startup = [home / name for name in SHELL_STARTUP_FILES]
    inside = [cwd / name for name in PROJECT_READ_ONLY]
    read_only = [
        path
        for path in _existing([*config.protected, *startup, *inside])
        if any(_within(path, root) for root in writable)
    ]
    secrets = _existing([*(home / name for name in KEY_LOCATIONS), *config.secret_files])
    hidden_folders = [path for path in secrets if path.is_dir()]
    hidden_files = [path for path in secrets if path.is_file()]
    return Layout(
        tuple(writable),
        tuple(read_only),
        tuple(hidden_folders),
        tuple(hidden_files),
        network,
        None if network else proxy,
    )


def is_writable(path: Path, lay: Layout) -> bool:
    resolved = _resolve(path)
    if any(_within(resolved, root) for root in lay.read_only):
        return False
    return any(_within(resolved, root) for root in lay.writable)


def _existing(paths: list[Path]) -> list[Path]:
    seen: list[Path] = []
    for path in paths:
        # Most candidates (start-up files, secrets folders) do not exist: one stat each.
        if not os.path.exists(os.path.expanduser(path)):
            continue
        resolved = _resolve(path)
        if resolved not in seen:
            seen.append(resolved)
    return seen


def _resolve(path: Path) -> Path:
    return Path(os.path.realpath(os.path.expanduser(path)))


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
