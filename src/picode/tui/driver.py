"""Textual's Linux driver with an input wait that follows the pending escape deadline.

A lone ESC byte may begin an escape sequence, so the parser holds it until a short delay
(``ESCDELAY``) passes with nothing after it. Textual's input thread checks that delay only
when ``select`` wakes up, and it waits up to 100 ms, so Esc — the key that stops a reply —
took about 100 ms whatever ESCDELAY said. Here the wait ends at the parser's deadline
instead; everything else (reading, decoding, feeding the parser) is Textual's, unchanged.
"""

from __future__ import annotations

import os
import selectors
from codecs import getincrementaldecoder
from typing import Any

from textual._parser import Parser
from textual._time import get_time
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

#: The wait when no escape is pending: as in Textual (it also bounds the exit check).
IDLE_WAIT_S = 0.1


def input_wait(parser: Parser[Any], now: float) -> float:
    """How long the input thread may sleep: until the parser's pending escape deadline,
    else ``IDLE_WAIT_S``."""
    deadline: float | None = getattr(parser, "_timeout_time", None)
    if deadline is None:
        return IDLE_WAIT_S
    return min(IDLE_WAIT_S, max(0.0, deadline - now))


class PromptEscDriver(LinuxDriver):
    def run_input_thread(self) -> None:
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        fileno = self.fileno
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode

        def process(ready: list[tuple[selectors.SelectorKey, int]], final: bool = False) -> None:
            for index, (_key, mask) in enumerate(ready):
                if mask & selectors.EVENT_READ:
                    last = index == len(ready) - 1
                    data = decode(os.read(fileno, 1024 * 4), final=final and last)
                    if not data:
                        break  # stdin is a pipe that ended
                    for event in parser.feed(data):
                        self.process_message(event)
            for event in parser.tick():
                self.process_message(event)

        try:
            while not self.exit_event.is_set():
                process(selector.select(input_wait(parser, get_time())))
            selector.unregister(self.fileno)
            process(selector.select(IDLE_WAIT_S), final=True)
        finally:
            selector.close()
