"""A session's earlier messages in the transcript: the tail first, older pages on demand.

Opening (or switching to) a long session renders only its last ``tail_size`` messages, so
the newest are on screen at once; the transcript's "earlier messages" row asks for the page
before the oldest one shown when the person scrolls up to it. Messages are read with
``display_range``, which parses only the lines asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from picode.ai.types import Message
    from picode.tui.controllers.router import EventRouter
    from picode.tui.widgets.transcript import Transcript

TAIL_SIZE = 20
PAGE_SIZE = 40


if TYPE_CHECKING:
    # Only for the type checker: a Protocol class costs instructions to create, on
    # the way to the first frame.
    class DisplaySource(Protocol):
        @property
        def display_count(self) -> int: ...

        def display_range(self, start: int, stop: int) -> list[Message]: ...

    class HistoryHost(Protocol):
        @property
        def transcript(self) -> Transcript: ...

        @property
        def router(self) -> EventRouter | None: ...

        @property
        def session(self) -> DisplaySource | None: ...


class HistoryPager:
    def __init__(
        self, host: HistoryHost, *, tail_size: int = TAIL_SIZE, page_size: int = PAGE_SIZE
    ) -> None:
        self._host = host
        self.tail_size = tail_size
        self.page_size = page_size

    def show_tail(self) -> None:
        """Render the newest messages; the rest wait behind the "earlier messages" row."""
        host = self._host
        source, router = host.session, host.router
        if source is None or router is None:
            return
        host.transcript.loader = self.load_older
        total = source.display_count
        start, messages = _aligned(source, max(0, total - self.tail_size), total)
        router.show_history(messages, start=start)

    def load_older(self) -> None:
        """Mount the page before the oldest message shown (the transcript calls this)."""
        host = self._host
        source, router, transcript = host.session, host.router, host.transcript
        stop = transcript.older
        if source is None or router is None or stop <= 0:
            transcript.prepend([], stop)
            return
        start, messages = _aligned(source, max(0, stop - self.page_size), stop)
        transcript.prepend(router.build_entries(messages, start), start)


def _aligned(source: DisplaySource, start: int, stop: int) -> tuple[int, list[Message]]:
    """Messages ``start:stop``, begun earlier if needed so that no tool result is cut off
    from the call it answers (it would render as a result without its call)."""
    from picode.ai.types import ToolResultMessage  # not needed for the first frame

    messages = source.display_range(start, stop)
    while start > 0 and messages and isinstance(messages[0], ToolResultMessage):
        step = min(start, 8)
        messages = source.display_range(start - step, start) + messages
        start -= step
    return start, messages
