"""Textual's Linux driver with an input wait that follows the pending escape deadline.

A lone ESC byte may begin an escape sequence, so the parser holds it until a short delay
(``ESCDELAY``) passes with nothing after it. Textual's input thread checks that delay only
when ``select`` wakes up, and it waits up to 100 ms, so Esc — the key that stops a reply —
took about 100 ms whatever ESCDELAY said. Here the wait ends at the parser's deadline
instead; everything else (reading, decoding, feeding the parser) is Textual's, unchanged.

A lone ESC that came by itself, in a read that held nothing after it, is the Esc key: a
terminal writes each key's sequence in one go, so the rest of a sequence arrives with its
ESC, not milliseconds later. It is released after ``LONE_ESC_GRACE_S`` instead of the
whole ``ESCDELAY`` (crossterm decides the same way, with no grace at all). An ESC at the end
of a full read may be cut from its sequence and waits the whole delay; so does every ESC
when the person set ``ESCDELAY`` to something other than picode's default (a slow serial
line, say).

With nothing pending the thread sleeps until input comes: Textual wakes it ten times a
second to see whether it should stop; here stopping writes to a pipe the thread also waits
on, so an idle picode is not woken at all (docs/benchmarks.md, idle CPU).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import threading
from codecs import getincrementaldecoder
from typing import Any

from textual._parser import Parser
from textual._time import get_time
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

from picode.tui import ESCDELAY_MS

#: The wait when no escape is pending: until input comes (or the thread is told to stop).
IDLE_WAIT_S: float | None = None
#: The last wait, after the thread was told to stop: what is already on its way is read.
FINAL_WAIT_S = 0.1
#: How long a lone ESC that came by itself waits for more before it is the Esc key.
LONE_ESC_GRACE_S = 0.002
READ_SIZE = 1024 * 4


def input_wait(parser: Parser[Any], now: float) -> float | None:
    """How long the input thread may sleep: until the parser's pending escape deadline,
    else ``IDLE_WAIT_S``."""
    deadline: float | None = getattr(parser, "_timeout_time", None)
    if deadline is None:
        return IDLE_WAIT_S
    return max(0.0, deadline - now)


def lone_escape_grace(escape_delay_s: float) -> float | None:
    """The grace for a lone ESC, or None when every ESC must wait the whole delay."""
    return LONE_ESC_GRACE_S if round(escape_delay_s * 1000) == int(ESCDELAY_MS) else None


PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"


class LoneEscape:
    """Decides when a pending ESC is the Esc key without waiting the whole delay."""

    def __init__(self, grace: float | None) -> None:
        self.grace = grace
        self.release_at: float | None = None
        self.in_paste = False

    def after_read(self, parser: Parser[Any], data: str, read_size: int, now: float) -> None:
        """Only a read that ends in a lone ESC and left nothing unread (it did not fill the
        buffer) releases early; never inside a bracketed paste, whose text may hold ESC."""
        start, end = data.rfind(PASTE_START), data.rfind(PASTE_END)
        if start != end:
            self.in_paste = start > end
        self.release_at = None
        if self.grace is None or self.in_paste or read_size >= READ_SIZE:
            return
        deadline: float | None = getattr(parser, "_timeout_time", None)
        if deadline is not None and data.endswith("\x1b"):
            self.release_at = min(deadline, now + self.grace)

    def wait(self, parser: Parser[Any], now: float) -> float | None:
        full = input_wait(parser, now)
        if self.release_at is None:
            return full
        early = max(0.0, self.release_at - now)
        return early if full is None else min(full, early)

    def release_if_due(self, parser: Parser[Any], now: float) -> None:
        """Past the grace with nothing more read: let the parser give the Esc key now."""
        if self.release_at is None or now < self.release_at:
            return
        self.release_at = None
        if getattr(parser, "_timeout_time", None) is not None:
            parser._timeout_time = 0.0  # already due: the next tick() gives the Esc key


class WakingEvent(threading.Event):
    """The input thread's stop flag: setting it also wakes the thread's ``select``."""

    def __init__(self) -> None:
        super().__init__()
        self.wake_fd, self._wake_write = os.pipe()
        os.set_blocking(self.wake_fd, False)
        os.set_blocking(self._wake_write, False)

    def set(self) -> None:
        super().set()
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._wake_write, b"!")

    def drain(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            while os.read(self.wake_fd, 64):
                pass


class PromptEscDriver(LinuxDriver):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.exit_event = self._waking = WakingEvent()

    def run_input_thread(self) -> None:
        from textual import constants

        waking = self._waking
        waking.drain()  # a stop signalled before this thread started must not end it
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        selector.register(waking.wake_fd, selectors.EVENT_READ)
        fileno = self.fileno
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode
        lone = LoneEscape(lone_escape_grace(constants.ESCAPE_DELAY))

        def process(ready: list[tuple[selectors.SelectorKey, int]], final: bool = False) -> None:
            ready = [(key, mask) for key, mask in ready if key.fd == fileno]
            for index, (_key, mask) in enumerate(ready):
                if mask & selectors.EVENT_READ:
                    last = index == len(ready) - 1
                    raw = os.read(fileno, READ_SIZE)
                    data = decode(raw, final=final and last)
                    if not data:
                        break  # stdin is a pipe that ended
                    for event in parser.feed(data):
                        self.process_message(event)
                    lone.after_read(parser, data, len(raw), get_time())
            lone.release_if_due(parser, get_time())
            for event in parser.tick():
                self.process_message(event)

        try:
            while not self.exit_event.is_set():
                process(selector.select(lone.wait(parser, get_time())))
            selector.unregister(self.fileno)
            waking.drain()
            process(selector.select(FINAL_WAIT_S), final=True)
        finally:
            selector.close()
