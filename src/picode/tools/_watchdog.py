"""A process that kills the model's command groups when picode dies, however it dies.

A process group outlives its parent: closing the terminal or ``kill -9`` of picode would
leave a command's background jobs running. A parent-death signal covers only the direct
child, not what the shell starts. So one small helper process, started on first use,
holds a list of live groups sent over a pipe; when picode dies the pipe ends and the
helper SIGKILLs every group still listed. (In the sandbox bubblewrap does this itself:
``--die-with-parent`` plus its own PID namespace.)
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading

_HELPER = r"""
import os, signal
for name in ("SIGHUP", "SIGINT", "SIGTERM", "SIGPIPE"):
    signal.signal(getattr(signal, name), signal.SIG_IGN)
groups, rest = set(), b""
while True:
    try:
        data = os.read(0, 4096)
    except InterruptedError:
        continue
    except OSError:
        break
    if not data:
        break
    *lines, rest = (rest + data).split(b"\n")
    for line in lines:
        if line[:1] == b"+":
            groups.add(int(line[1:]))
        elif line[:1] == b"-":
            groups.discard(int(line[1:]))
for group in groups:
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
"""


class Watchdog:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._pid = 0

    def watch(self, pgid: int) -> None:
        self._send(f"+{pgid}\n")

    def forget(self, pgid: int) -> None:
        self._send(f"-{pgid}\n")

    def _send(self, line: str) -> None:
        with self._lock:
            process = self._ensure()
            if process is None or process.stdin is None:
                return
            with contextlib.suppress(OSError):
                os.write(process.stdin.fileno(), line.encode())

    def _ensure(self) -> subprocess.Popen[bytes] | None:
        # After a fork the child must not share the parent's helper.
        alive = self._process is not None and self._process.poll() is None
        if alive and self._pid == os.getpid():
            return self._process
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _HELPER],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            self._process = None
            return None
        self._pid = os.getpid()
        return self._process


WATCHDOG = Watchdog()
