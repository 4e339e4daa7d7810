"""Line output for the headless modes: UTF-8 whatever the locale, flushed per line, and
quiet when the reader goes away (``picode -p ... | head -1`` must not print a traceback).

JSON events and stderr lines are redacted (keys and token shapes, ``picode.ai.redaction``):
a program or a log collects them. The answer ``-p`` prints is the person's to read as is.
"""

from __future__ import annotations

import os
import sys
from typing import Any, BinaryIO

from picode.ai.redaction import redact_text
from picode.modes.serialize import dumps


class LineWriter:
    def __init__(self, stream: BinaryIO | None = None) -> None:
        self.stream: BinaryIO = stream if stream is not None else sys.stdout.buffer
        self.broken = False

    def line(self, text: str) -> None:
        if self.broken:
            return
        try:
            self.stream.write(text.encode("utf-8", errors="replace") + b"\n")
            self.stream.flush()
        except BrokenPipeError:
            self.broken = True
            _silence_stdout()
        except ValueError:  # the stream was closed under us
            self.broken = True

    def json(self, payload: dict[str, Any]) -> None:
        self.line(redact_text(dumps(payload)))

    def text(self, text: str) -> None:
        """A block of text, ending in exactly one newline."""
        self.line(text[:-1] if text.endswith("\n") else text)


def warn(text: str) -> None:
    """One ``picode: ...`` line on stderr; never raises, whatever stderr has become."""
    try:
        sys.stderr.write(f"picode: {redact_text(text)}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _silence_stdout() -> None:
    # The interpreter flushes stdout at exit; once the pipe is gone that flush would raise.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
