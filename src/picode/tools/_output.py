"""Bounded capture of a command's output: a rolling tail in memory, everything on disk.

Until the output outgrows the limits nothing touches the disk. From then on every byte goes
to a temp log file and memory keeps only the last ``max_bytes`` (plus one read chunk). The
log is redacted on its way to the disk (``picode.ai.redaction``): it outlives the session
in a folder other users may list.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections import deque
from dataclasses import dataclass
from typing import BinaryIO

from picode.ai.redaction import StreamRedactor, redact
from picode.ai.untrusted import as_displayed

LOG_PREFIX = "picode-bash-"
#: A log stops growing here (the head is kept, the tail is appended at close): ``yes`` for
#: a minute must not fill the disk.
LOG_CAP_BYTES = 50 * 1024 * 1024
#: Logs older than this are removed when a bash tool is created.
LOG_MAX_AGE_S = 3 * 24 * 3600


def prune_old_logs(now: float | None = None) -> int:
    """Remove picode's bash logs older than ``LOG_MAX_AGE_S``; how many went."""
    folder = tempfile.gettempdir()
    cutoff = (time.time() if now is None else now) - LOG_MAX_AGE_S
    removed = 0
    try:
        names = [name for name in os.listdir(folder) if name.startswith(LOG_PREFIX)]
    except OSError:
        return 0
    for name in names:
        path = os.path.join(folder, name)
        with contextlib.suppress(OSError):
            if os.stat(path).st_mtime < cutoff:
                os.unlink(path)
                removed += 1
    return removed


@dataclass(slots=True)
class RenderedTail:
    text: str
    truncated: bool
    shown_lines: int


class OutputCapture:
    def __init__(self, max_lines: int, max_bytes: int, log_cap: int = LOG_CAP_BYTES) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self.log_cap = log_cap
        self._logged = 0
        self._log_skipped = 0
        self.total_bytes = 0
        self.total_newlines = 0
        self.log_path: str | None = None
        self.peak_buffered_bytes = 0
        self._tail: deque[bytes] = deque()
        self._tail_bytes = 0
        self._dropped = False
        self._last_byte = b"\n"
        self._log: BinaryIO | None = None
        self._redactor = StreamRedactor()
        self._spilled = False
        self.log_error: str | None = None

    @property
    def total_lines(self) -> int:
        return self.total_newlines + (0 if self._last_byte == b"\n" else 1)

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        self.total_bytes += len(chunk)
        self.total_newlines += chunk.count(b"\n")
        self._last_byte = chunk[-1:]
        if not self._spilled and (
            self.total_bytes > self.max_bytes or self.total_newlines >= self.max_lines
        ):
            self._spilled = True
            self._open_log()
        if self._log is not None:
            self._write_log(_encode(self._redactor.feed(_decode(chunk))))
        self._tail.append(chunk)
        self._tail_bytes += len(chunk)
        if self._spilled:
            while len(self._tail) > 1 and self._tail_bytes - len(self._tail[0]) >= self.max_bytes:
                self._tail_bytes -= len(self._tail.popleft())
                self._dropped = True
        self.peak_buffered_bytes = max(self.peak_buffered_bytes, self._tail_bytes)

    def _open_log(self) -> None:
        try:
            fd, self.log_path = tempfile.mkstemp(prefix=LOG_PREFIX, suffix=".log")
            self._log = os.fdopen(fd, "wb")
        except OSError as exc:
            self._log_failed(exc)
            return
        for chunk in self._tail:
            self._write_log(_encode(self._redactor.feed(_decode(chunk))))

    def _write_log(self, chunk: bytes) -> None:
        if self._log is None:
            return
        room = self.log_cap - self._logged
        if room <= 0:
            self._log_skipped += len(chunk)
            return
        part = chunk[:room]
        self._log_skipped += len(chunk) - len(part)
        try:
            self._log.write(part)
        except OSError as exc:
            self._log_failed(exc)
            return
        self._logged += len(part)

    def _log_failed(self, exc: OSError) -> None:
        # Memory stays bounded regardless; only the full copy on disk is lost.
        self.log_error = f"the full output could not be saved: {exc.strerror or exc}"
        self.close(keep_log=False)

    def render(self) -> RenderedTail:
        """The last ``max_lines`` lines within ``max_bytes``, decoded leniently, as a
        terminal would show them (``as_displayed``; the log keeps every byte)."""
        data = b"".join(self._tail)
        cut = len(data) > self.max_bytes or self._dropped
        if len(data) > self.max_bytes:
            data = data[-self.max_bytes :]
        if cut:
            # Start on a character boundary, and on a line boundary when there is one.
            start = 0
            while start < len(data) and start < 4 and 0x80 <= data[start] < 0xC0:
                start += 1
            newline = data.find(b"\n", start, len(data) - 1)
            data = data[newline + 1 :] if newline != -1 else data[start:]
        text = as_displayed(data.decode("utf-8", "replace"))
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if len(lines) > self.max_lines:
            lines = lines[-self.max_lines :]
            cut = True
        return RenderedTail("\n".join(lines), cut, len(lines))

    def close(self, *, keep_log: bool) -> None:
        if self._log is not None and keep_log:
            # The unfinished last line, held back in case a token went on in the next read.
            self._write_log(_encode(self._redactor.flush()))
        if self._log is not None:
            if keep_log and self._log_skipped:
                # Head and tail: the middle past the cap is left out, and says so.
                tail = b"".join(self._tail)
                appended = tail[-min(len(tail), self._log_skipped) :]
                # From a line's start, so that no token is cut in two and missed.
                appended = appended[appended.find(b"\n") + 1 :] or appended
                appended = _encode(redact(_decode(appended))[0])
                left_out = self._log_skipped - len(appended)
                marker = f"\n[… {left_out} bytes left out: the log keeps the first "
                marker += f"{self.log_cap // (1024 * 1024)} MB and the last part …]\n"
                with contextlib.suppress(OSError):
                    self._log.write(marker.encode() + appended)
            self._log.close()
            self._log = None
        if not keep_log and self.log_path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.log_path)
            self.log_path = None


def _decode(data: bytes) -> str:
    # Any bytes round-trip: what is not UTF-8 is written back exactly as it came.
    return data.decode("utf-8", "surrogateescape")


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")
