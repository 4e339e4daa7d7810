"""Textual's Linux driver with an input wait that follows the pending Esc deadline.

A lone ESC byte is either the Esc key or the start of an escape sequence whose rest has not
arrived yet; the parser decides once ``ESCDELAY`` has passed. Textual's ``LinuxDriver``
checks that deadline only when its input thread wakes up, and it sleeps in
``select(0.1)``: a lone Esc cost ~100 ms whatever ``ESCDELAY`` said. Here the thread sleeps
until the parser's deadline instead, so Esc is handled ``ESCDELAY`` ms after its byte.
Sequences split across reads still parse: the parser is unchanged, only woken on time.
Terminals with the kitty keyboard protocol (Textual asks for it at start-up) send Esc as an
unambiguous ``CSI 27 u``, handled as soon as it is read.
"""

from __future__ import annotations

import os
import selectors
from codecs import getincrementaldecoder

from textual._parser import ParseError
from textual._time import get_time
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

#: How often the thread looks at ``exit_event`` when no escape sequence is pending.
IDLE_WAIT_S = 0.1


def input_wait(parser: XTermParser) -> float:
    """Seconds to wait for input: until the parser's escape deadline, at most ``IDLE_WAIT_S``."""
    deadline: float | None = getattr(parser, "_timeout_time", None)
    if deadline is None:
        return IDLE_WAIT_S
    return max(0.0, min(IDLE_WAIT_S, deadline - get_time()))


class EscAwareDriver(LinuxDriver):
    """``LinuxDriver`` whose input loop wakes at the parser's escape deadline."""

    def run_input_thread(self) -> None:
        # Textual 8.2's loop, with ``select(0.1)`` replaced by ``select(input_wait(...))``.
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode

        def process(ready: list[tuple[selectors.SelectorKey, int]], final: bool = False) -> None:
            for _key, mask in ready:
                if mask & selectors.EVENT_READ:
                    data = decode(os.read(self.fileno, 4096), final=final)
                    if not data:  # stdin is a pipe that was closed
                        break
                    for event in parser.feed(data):
                        self.process_message(event)
            for event in parser.tick():
                self.process_message(event)

        try:
            while not self.exit_event.is_set():
                process(selector.select(input_wait(parser)))
            selector.unregister(self.fileno)
            process(selector.select(0), final=True)
        finally:
            selector.close()
            try:
                for _event in parser.feed(""):
                    pass
            except (EOFError, ParseError):
                pass
