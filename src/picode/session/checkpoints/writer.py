"""Writing a restore into the project: inside the root only, each file atomically.

A file is never written in place: its content goes to a temporary file in the same folder,
which is flushed to disk (``fsync``) and then renamed over the target (``os.replace``, atomic
on POSIX and Windows). Killed at any moment, a restore leaves each file either as it was or as
in the checkpoint, never half written; what it can leave behind is a temporary file, named in
a journal written before the first one is created and removed by the next operation.

A path is refused (never touched) when it is absolute, has an empty, ``.`` or ``..`` part or
a ``.git`` part, or when a folder on the way to it is a symbolic link or not a folder: git
itself never stores a file under a link, so such a path can only lead out of the project or
somewhere the checkpoint did not mean.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from picode.session.checkpoints.plan import LINK_MODE

TEMP_PREFIX = ".picode-restore-"


class UnsafePathError(Exception):
    """The path is not one a restore may touch; the message says why."""


def parts_of(relative: str) -> list[str]:
    if not relative or "\0" in relative or relative.startswith("/") or "\\" in relative:
        raise UnsafePathError("not a relative path inside the project")
    parts = relative.split("/")
    for part in parts:
        if part in ("", ".", ".."):
            raise UnsafePathError("the path leaves the project or is not normal")
        if part.lower() == ".git":
            raise UnsafePathError("the path is inside a .git folder")
    return parts


def parent_of(root: Path, relative: str, *, create: bool) -> Path | None:
    """The folder that holds ``relative``, checked link by link from ``root``; None when it
    does not exist and ``create`` is false."""
    parts = parts_of(relative)
    folder = root
    for part in parts[:-1]:
        folder = folder / part
        try:
            info = os.lstat(folder)
        except FileNotFoundError:
            if not create:
                return None
            os.mkdir(folder)
            continue
        if stat.S_ISLNK(info.st_mode):
            raise UnsafePathError(f"the folder {part!r} on its way is a symbolic link")
        if not stat.S_ISDIR(info.st_mode):
            raise UnsafePathError(f"{part!r} on its way is a file, not a folder")
    return folder


def target_of(root: Path, relative: str, *, create: bool) -> Path | None:
    folder = parent_of(root, relative, create=create)
    return None if folder is None else folder / relative.rsplit("/", 1)[-1]


def new_mode(git_mode: str, current: int | None) -> int:
    """The permission bits a restored file gets: the file's own when it exists (so a
    restore keeps them), with the execute bits as the checkpoint says."""
    executable = git_mode == "100755"
    if current is None:
        umask = os.umask(0)
        os.umask(umask)
        return (0o777 if executable else 0o666) & ~umask
    bits = stat.S_IMODE(current)
    if executable:
        return bits | ((bits & 0o444) >> 2)
    return bits & ~0o111


def temp_for(target: Path) -> Path:
    return target.with_name(f"{TEMP_PREFIX}{secrets.token_hex(8)}.tmp")


def write_temp(temp: Path, target: Path, content: bytes, git_mode: str) -> None:
    """The new content in ``temp`` (beside ``target``), flushed; the caller renames it."""
    if git_mode == LINK_MODE:
        os.symlink(os.fsdecode(content), temp)
        return
    try:
        mode = os.lstat(target).st_mode
        current = mode if stat.S_ISREG(mode) else None
    except FileNotFoundError:
        current = None
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(temp, flags, 0o600)
    try:
        view = memoryview(content)
        while view:
            view = view[os.write(fd, view) :]
        if hasattr(os, "fchmod"):
            os.fchmod(fd, new_mode(git_mode, current))
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    os.close(fd)


def put_in_place(temp: Path, target: Path) -> None:
    """Rename ``temp`` over ``target``; an empty folder in the way is removed first (the
    checkpoint had a file there), a non-empty one is an error."""
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISDIR(info.st_mode):
        try:
            os.rmdir(target)
        except OSError as exc:
            raise UnsafePathError("a folder that is not empty is in its place") from exc
    os.replace(temp, target)


def remove_empty_parents(root: Path, relative: str) -> None:
    """Remove the folders a deletion left empty, up to (not including) the root."""
    parts = relative.split("/")[:-1]
    while parts:
        try:
            os.rmdir(root.joinpath(*parts))
        except OSError:
            return
        parts.pop()


def fsync_folder(folder: Path) -> None:
    # Makes the renames durable across a power cut; not needed (nor possible) on Windows.
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class Journal:
    """The temporary files a restore may leave if killed, listed before they exist."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def record(self, temps: list[Path]) -> None:
        data = b"\0".join(os.fsencode(temp) for temp in temps)
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.path)

    def clear(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

    def recover(self) -> None:
        """Remove what a killed restore left behind (only files named as its temporaries)."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return
        for item in data.split(b"\0"):
            temp = Path(os.fsdecode(item))
            if item and temp.name.startswith(TEMP_PREFIX):
                with contextlib.suppress(OSError):
                    os.unlink(temp)
        self.clear()
