"""The status line above the editor: working spinner, retry countdown, notices."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Literal

from textual.content import Content
from textual.strip import Strip
from textual.visual import Visual
from textual.widget import Widget

from picode.ai.untrusted import safe
from picode.tui.widgets.pacing import Due, next_tick_point, on_beat, tick_count

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
#: Cells the spinner takes: its frame and a space.
SPINNER_CELLS = 2

NoticeLevel = Literal["info", "warning", "error"]
_LEVEL_STYLE: dict[str, str] = {"info": "$muted", "warning": "$warning", "error": "$tool-error"}


def format_elapsed(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m {seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def short_error(error: str, limit: int = 80) -> str:
    line = error.strip().splitlines()[0] if error.strip() else "Request failed"
    return line if len(line) <= limit else line[: limit - 1] + "…"


class StatusLine(Widget):
    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        padding: 0 1;
        color: $muted;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(id="status")
        self._clock = clock
        self.working_since: float | None = None
        self.retry_deadline: float | None = None
        self.retry_attempt = (0, 0)
        self.notice: tuple[str, NoticeLevel] | None = None
        self._ticker: Due | None = None
        #: The drawn rest of the line while working, with what it was drawn from; and the
        #: spinner's drawn frames (see ``render_line``).
        self._drawn_rest: tuple[object, Strip] | None = None
        self._drawn_spinner: dict[tuple[str, object], Strip] = {}

    def on_mount(self) -> None:
        self._sync_ticker()

    @property
    def is_working(self) -> bool:
        return self.working_since is not None

    @property
    def is_retrying(self) -> bool:
        return self.retry_deadline is not None

    def start_working(self) -> None:
        # A retry that starts its request is no longer counting down.
        self.retry_deadline = None
        if self.working_since is None:
            self.working_since = self._clock()
        self._changed()

    def stop_working(self) -> None:
        self.working_since = None
        self.retry_deadline = None
        self._changed()

    def show_retry(self, attempt: int, max_attempts: int, delay_ms: int) -> None:
        """Count down to a retry; the transcript's retry line says what failed."""
        self.retry_deadline = self._clock() + delay_ms / 1000
        self.retry_attempt = (attempt, max_attempts)
        self._changed()

    def end_retry(self) -> None:
        self.retry_deadline = None
        self._changed()

    def set_notice(self, text: str | None, level: NoticeLevel = "info") -> None:
        self.notice = (text, level) if text else None
        self._changed()

    def retry_seconds_left(self) -> int:
        if self.retry_deadline is None:
            return 0
        return max(0, math.ceil(self.retry_deadline - self._clock() - 1e-9))

    def render(self) -> Content:
        now = self._clock()
        spinner = self._spinner(now)
        rest = self._rest(now)
        return rest if spinner is None else spinner + rest

    def render_line(self, y: int) -> Strip:
        # While it works, the spinner changes 10 times a second and the rest once a
        # second: the rest's drawn strip is kept, and only the spinner's cells are drawn
        # anew (a tick's line: 0.09 ms against 0.22 drawn whole, docs/benchmarks.md).
        now = self._clock()
        spinner = self._spinner(now)
        width = self.size.width
        if y or spinner is None or width <= SPINNER_CELLS or self.text_selection is not None:
            return super().render_line(y)
        rest = self._rest(now)
        style = self.visual_style
        key = (rest.plain, tuple(rest.spans), width, style)
        drawn = self._drawn_rest
        if drawn is None or drawn[0] != key:
            # Drawn behind a blank spinner and cut after it: the same wrapping, ellipsis and
            # cell offsets (text selection's) as the whole line.
            whole = Content(" " * SPINNER_CELLS) + rest
            strips = Visual.to_strips(self, whole, width, 1, style)
            rest_strip = strips[0].crop(SPINNER_CELLS) if strips else Strip([])
            drawn = self._drawn_rest = (key, rest_strip)
        cell = self._drawn_spinner.get((spinner.plain, style))
        if cell is None:
            cell = Visual.to_strips(self, spinner, SPINNER_CELLS, 1, style)[0]
            self._drawn_spinner[(spinner.plain, style)] = cell
        return Strip.join([cell, drawn[1]])

    def notify_style_update(self) -> None:
        # Another theme: the kept strips are in the old colours.
        self._drawn_rest = None
        self._drawn_spinner.clear()
        super().notify_style_update()

    def _spinner(self, now: float) -> Content | None:
        """The spinner's frame while working (not while a retry counts down)."""
        if self.retry_deadline is not None or self.working_since is None:
            return None
        # Counted on the clock's ticks (pacing.py), from the first frame.
        ticks = tick_count(now) - tick_count(self.working_since)
        return Content.styled(f"{SPINNER[ticks % len(SPINNER)]} ", "$primary")

    def _rest(self, now: float) -> Content:
        """Everything after the spinner: what is going on, then the notice."""
        parts: list[Content] = []
        if self.retry_deadline is not None:
            attempt, most = self.retry_attempt
            left = self.retry_seconds_left()
            when = f"Retrying in {left} s" if left > 0 else "Retrying now"
            parts.append(
                Content.styled(f"{when} (attempt {attempt}/{most}) · esc to cancel", "$warning")
            )
        elif self.working_since is not None:
            parts.append(
                Content.assemble(
                    ("Working… ", "$foreground"),
                    (format_elapsed(now - self.working_since), "$muted"),
                    ("  (esc to interrupt)", "$muted"),
                )
            )
        if self.notice is not None:
            text, level = self.notice
            if parts:
                parts.append(Content("  ·  "))
            parts.append(Content.styled(safe(text), _LEVEL_STYLE[level]))
        return Content("").join(parts)

    def _changed(self) -> None:
        self._sync_ticker()
        self.refresh()

    def _sync_ticker(self) -> None:
        if not self.is_mounted:
            return
        if self.working_since is not None or self.retry_deadline is not None:
            if self._ticker is None:
                self._schedule_tick()
        elif self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None

    def _schedule_tick(self) -> None:
        # On the beat shared with the reply's flushes (pacing.py): a tick due with a flush
        # is drawn in the flush's frame.
        self._ticker = on_beat(next_tick_point(time.monotonic()), self._tick)

    def _tick(self) -> None:
        self._ticker = None
        working = self.working_since is not None or self.retry_deadline is not None
        if working and self.is_attached:
            self.refresh()
            self._schedule_tick()
