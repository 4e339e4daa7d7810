"""A process that kills the model's command groups when picode dies, however it dies.

A process group outlives its parent: closing the terminal or ``kill -9`` of picode would
leave a command's background jobs running. A parent-death signal covers only the direct
child, not what the shell starts. So one small helper process, started on first use,
holds a list of live groups sent over a pipe; when picode dies the pipe ends and the
helper SIGKILLs every group still listed. (In the sandbox bubblewrap does this itself:
``--die-with-parent`` plus its own PID namespace.)

A group is only known once its shell exists, and a shell starts its jobs in a millisecond;
picode killed in between would leave them running. So an unsandboxed command waits behind a
``Gate`` until its group is listed, and never runs if picode dies first.
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


#: Waits for one line on stdin, then becomes the command with stdin empty again. End of
#: file (picode gone before the group was listed) means the command never runs.
_GATE_SCRIPT = 'IFS= read -r _ || exit 125; exec "$0" "$@" </dev/null'
GATE_SHELL = "/bin/sh"


class Gate:
    """Holds a command at its start until ``open``; closing without opening cancels it."""

    def __init__(self) -> None:
        self.stdin, self._release = os.pipe()

    @staticmethod
    def wrap(argv: list[str]) -> list[str]:
        return [GATE_SHELL, "-c", _GATE_SCRIPT, *argv]

    def started(self) -> None:
        """The command's process exists: only it may hold the reading end now."""
        self._close_stdin()

    def open(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._release, b"\n")
        self.close()

    def close(self) -> None:
        self._close_stdin()
        if self._release >= 0:
            os.close(self._release)
            self._release = -1

    def _close_stdin(self) -> None:
        if self.stdin >= 0:
            os.close(self.stdin)
            self.stdin = -1


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
