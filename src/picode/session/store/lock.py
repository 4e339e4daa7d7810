"""One picode per session file: a second one on the same session is refused, not forked.

Two processes appending to one file would each follow their own branch, and the next
``picode -c`` would show one and hide the other. The lock is an ``flock`` on a file beside
the session, so it goes with the process however it ends (no stale locks after kill -9).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no locking, as before
    fcntl = None  # type: ignore[assignment]


class SessionInUseError(OSError):
    """Another picode has this session open; the message says which and what to do."""


class SessionLock:
    def __init__(self, path: Path, fd: int | None) -> None:
        self.path = path
        self._fd = fd

    @classmethod
    def acquire(cls, session_path: Path) -> SessionLock:
        lock_path = session_path.with_name(session_path.name + ".lock")
        if fcntl is None:
            return cls(lock_path, None)
        try:
            lock_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            # An unwritable folder: the session's own write fails next and says so.
            return cls(lock_path, None)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 64).decode("ascii", "replace").strip()
            os.close(fd)
            who = f" (pid {holder})" if holder.isdigit() else ""
            raise SessionInUseError(
                f"session {session_path.name} is open in another picode{who}. Finish there, "
                "or start a new session here (picode without -c)."
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        return cls(lock_path, fd)

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        with contextlib.suppress(OSError):
            os.close(fd)
