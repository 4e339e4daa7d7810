"""Run the real ``picode`` TUI in a pseudo-terminal and read its screen as a person would.

The child gets the pty's slave side as stdin, stdout, stderr *and* controlling terminal (a
new session, then ``TIOCSCTTY``), a window size set with ``TIOCSWINSZ``, and
``TERM=xterm-256color``. A thread reads the master side and feeds a ``pyte`` screen, so a
test waits for text to appear on the rendered screen instead of parsing escape codes.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import pyte

from tests.cli.harness import PICODE, PicodeEnv

COLUMNS = 120
LINES = 36
WAIT_TIMEOUT = 30.0

ENTER = b"\r"
ESCAPE = b"\x1b"
CTRL_C = b"\x03"
CTRL_D = b"\x04"
CTRL_O = b"\x0f"

#: The editor's placeholder: on screen from the first frame on.
READY = "Ask picode…"

#: The child makes the inherited pty its controlling terminal, then becomes picode (same
#: pid, so a test can signal it). Doing this in ``preexec_fn`` would fork a threaded parent.
_BECOME_PICODE = (
    "import fcntl, os, sys, termios; "
    "fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


class Terminal:
    """One picode process on a pty, with its screen kept up to date by a reader thread."""

    def __init__(
        self,
        args: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        columns: int = COLUMNS,
        lines: int = LINES,
        command: Sequence[str] = PICODE,
    ) -> None:
        """``command`` is what runs with ``args``: ``python -m picode`` unless a bench
        names the installed console script or another app."""
        self.screen = pyte.Screen(columns, lines)
        self._stream = pyte.ByteStream(self.screen)
        self._changed = threading.Condition()
        self._closed = False
        #: Every byte the child wrote: what scrolled away or came after the app left.
        self.output = bytearray()
        #: (monotonic time, length of ``output`` after it) for every read: when bytes came.
        self.arrivals: list[tuple[float, int]] = []
        #: Off, the screen is not kept up to date: a bench timing bytes keeps the reader
        #: from spending CPU on rendering what it does not look at.
        self.render = True
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
        self._master = master
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", _BECOME_PICODE, *command, *args],
                cwd=cwd,
                env={
                    **env,
                    "TERM": "xterm-256color",
                    "COLUMNS": str(columns),
                    "LINES": str(lines),
                },
                stdin=slave,
                stdout=slave,
                stderr=slave,
                start_new_session=True,
            )
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(slave)  # only the child holds it now: its exit ends our reads
        self._stop_reading = threading.Event()
        self._reader = threading.Thread(target=self._read, name="pty-reader", daemon=True)
        self._reader.start()

    # --- screen ------------------------------------------------------------------------

    def _read(self) -> None:
        while not self._stop_reading.is_set():
            ready, _, _ = select.select([self._master], [], [], 0.1)
            if not ready:
                continue
            try:
                data = os.read(self._master, 65536)
            except OSError:  # EIO: every slave descriptor is closed, the child is gone
                data = b""
            now = time.monotonic()
            with self._changed:
                if data:
                    self.output += data
                    self.arrivals.append((now, len(self.output)))
                    if self.render:
                        self._stream.feed(data)
                else:
                    self._closed = True
                self._changed.notify_all()
            if not data:
                return

    def text(self) -> str:
        """The rendered screen, one line per row, trailing blanks trimmed."""
        with self._changed:
            return "\n".join(line.rstrip() for line in self.screen.display)

    def poll(self, condition: Callable[[str], bool], timeout: float) -> str | None:
        """The screen text once ``condition`` holds for it; None on timeout or exit."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                screen = "\n".join(line.rstrip() for line in self.screen.display)
                if condition(screen):
                    return screen
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._closed:
                    return None
                self._changed.wait(remaining)

    def wait_for_bytes(self, token: bytes, since: int, timeout: float = WAIT_TIMEOUT) -> float:
        """When ``token`` arrived in the output after offset ``since`` (monotonic time of
        the read that completed it); fails on timeout or exit."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = self.output.find(token, since)
                if found >= 0:
                    end = found + len(token)
                    return next(at for at, length in self.arrivals if length >= end)
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._closed:
                    raise AssertionError(
                        f"no {token!r} in the output after byte {since} "
                        f"({'exited' if self._closed else 'timed out'})"
                    )
                self._changed.wait(remaining)

    def wait_until(
        self, condition: Callable[[str], bool], what: str, timeout: float = WAIT_TIMEOUT
    ) -> str:
        """Wait until ``condition(screen text)`` holds; fail with the screen if it never does."""
        screen = self.poll(condition, timeout)
        if screen is None:
            state = "picode exited" if self._closed else f"timed out after {timeout} s"
            raise AssertionError(
                f"{state} waiting for {what}; exit code {self.process.poll()}; "
                f"screen:\n{self.text()}"
            )
        return screen

    def wait_for_text(self, text: str, timeout: float = WAIT_TIMEOUT) -> str:
        return self.wait_until(lambda screen: text in screen, repr(text), timeout)

    def wait_for_gone(self, text: str, timeout: float = WAIT_TIMEOUT) -> str:
        return self.wait_until(lambda screen: text not in screen, f"{text!r} to go", timeout)

    # --- keys --------------------------------------------------------------------------

    def send(self, keys: bytes) -> None:
        os.write(self._master, keys)

    def press_until_gone(
        self, key: bytes, text: str, every: float = 0.5, timeout: float = WAIT_TIMEOUT
    ) -> None:
        """Press ``key`` until ``text`` leaves the screen, for a prompt that ignores keys
        for a moment after it appears (so typed-ahead text cannot answer it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.send(key)
            if self.poll(lambda screen: text not in screen, every) is not None:
                return
        self.wait_for_gone(text, timeout=0)  # fails with the screen

    def type(self, text: str) -> None:
        """Type ``text`` and press Enter."""
        self.send(text.encode("utf-8") + ENTER)

    # --- process -----------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def wait_exit(self, timeout: float = WAIT_TIMEOUT) -> int:
        code = self.process.wait(timeout)
        self._reader.join(timeout)
        return code

    def kill(self) -> None:
        """SIGKILL, as a crash would: nothing in picode runs after it."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(WAIT_TIMEOUT)

    def close(self) -> None:
        """Never leave a child or a thread behind, whatever the test did."""
        if self._master < 0:
            return
        try:
            if self.process.poll() is None:
                # Its own process group (a new session): whatever it started goes too.
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        finally:
            self._stop_reading.set()
            self._reader.join(10)
            os.close(self._master)
            self._master = -1


#: ``start(*args, env=None)``: what ``terminals`` yields and the ``tui`` fixture gives.
Start = Callable[..., Terminal]


@contextmanager
def terminals(picode: PicodeEnv, model: str) -> Iterator[Callable[..., Terminal]]:
    """``start(*args, env=None)`` runs picode on ``model`` in a new pty and returns once its
    first frame shows; every one started is closed at the end, pass or fail."""
    started: list[Terminal] = []

    def start(*args: str, env: dict[str, str] | None = None) -> Terminal:
        terminal = Terminal(
            [*args, "--model", model], cwd=picode.project, env={**picode.env, **(env or {})}
        )
        started.append(terminal)
        terminal.wait_for_text(READY)
        return terminal

    try:
        yield start
    finally:
        for terminal in started:
            terminal.close()
