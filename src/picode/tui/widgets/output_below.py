"""A row under the transcript saying that new output arrived below what is being read.

Textual takes the alternate screen, so the terminal's own scrollback is gone and the app
must say what the terminal would have shown: scrolled up while a reply streams, nothing
on screen moves and nothing else tells the person that more came in. The row appears when
the transcript grows while it is not following the bottom, and goes once the view is back
at the bottom (by scrolling, by ``ctrl+end``, or by a click on the row).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.content import Content
from textual.geometry import Size
from textual.widgets import Static

if TYPE_CHECKING:
    from picode.tui.widgets.transcript import Transcript

#: The key named on the row; the app's binding for ``scroll_to_end`` (keymap.toml may move it).
DEFAULT_KEY = "ctrl+end"


class OutputBelow(Static):
    DEFAULT_CSS = """
    OutputBelow {
        height: 1;
        padding: 0 1;
        color: $accent;
        text-style: bold;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def __init__(self, transcript: Transcript | None = None, key: str = DEFAULT_KEY) -> None:
        super().__init__("", id="output-below", markup=False)
        self.display = False
        self.key = key
        self._transcript: Transcript | None = None
        self._to_follow = transcript
        self._height = 0
        self._hushed = False

    def on_mount(self) -> None:
        if self._to_follow is not None:
            self.follow(self._to_follow)

    def follow(self, transcript: Transcript) -> None:
        """Watch ``transcript``: its growth and its scroll position."""
        self._transcript = transcript
        self._height = transcript.virtual_size.height
        self.watch(transcript, "virtual_size", self._grown, init=False)
        self.watch(transcript, "scroll_y", self._scrolled, init=False)

    def hush(self) -> None:
        """The next layout's growth is not output: entries unfolded or expanded (ctrl+o,
        ctrl+t, a search showing folded entries) make the transcript taller too."""
        if self.is_mounted:  # before, nothing is watched yet
            self._hushed = True
            self.call_after_refresh(self._unhush)

    def _unhush(self) -> None:
        self._hushed = False

    def set_key(self, key: str) -> None:
        self.key = key
        if self.display:
            self._show()

    def _grown(self, size: Size) -> None:
        transcript = self._transcript
        grew = size.height > self._height
        self._height = size.height
        # Earlier messages loaded above (scrolling up) make it taller too: not new output.
        if transcript is None or not grew or transcript.loading_page or self._hushed:
            return
        if not transcript.following:
            self._show()

    def _scrolled(self, _y: float) -> None:
        transcript = self._transcript
        if self.display and transcript is not None and transcript.at_bottom:
            self.display = False

    def _show(self) -> None:
        self.update(Content(f"↓ New output below — {self.key} to jump to the end"))
        self.display = True

    def on_click(self, event: events.Click) -> None:
        event.stop()
        if self._transcript is not None:
            self._transcript.scroll_end(animate=False)
        self.display = False
