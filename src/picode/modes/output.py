"""Line output for the headless modes: UTF-8 whatever the locale, flushed per line, and
quiet when the reader goes away (``picode -p ... | head -1`` must not print a traceback).

JSON events and stderr lines are redacted (keys and token shapes, ``picode.ai.redaction``):
a program or a log collects them. The answer ``-p`` prints is not redacted: it is the
person's to read.

Untrusted text never reaches a terminal raw: ``-p``'s answer written to a terminal loses
its escape sequences (``picode.ai.untrusted.safe``), and so does every warning; written to
a pipe or a file the answer is left as it is, for the program reading it. JSON lines are
safe either way (``serialize.dumps``)."""

from __future__ import annotations

import os
import sys
from typing import Any, BinaryIO

from picode.ai.redaction import redact_text
from picode.ai.untrusted import safe
from picode.modes.serialize import dumps


class LineWriter:
    def __init__(self, stream: BinaryIO | None = None) -> None:
        self.stream: BinaryIO = stream if stream is not None else sys.stdout.buffer
        self.broken = False
        self.to_terminal = _is_terminal(self.stream)

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
        if self.to_terminal:
            text = safe(text)
        self.line(text[:-1] if text.endswith("\n") else text)


def _is_terminal(stream: BinaryIO) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False


def warn(text: str) -> None:
    """One ``picode: ...`` line on stderr; never raises, whatever stderr has become."""
    try:
        # Warnings quote servers, files and the model, and stderr is usually a terminal.
        sys.stderr.write(f"picode: {safe(redact_text(text))}\n")
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
