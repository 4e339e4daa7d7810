"""The status line above the editor: working spinner, retry countdown, notices."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Literal

from textual.content import Content
from textual.widget import Widget

from picode.ai.untrusted import safe
from picode.tui.widgets.pacing import Due, next_tick_point, on_beat, tick_count

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

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
        parts: list[Content] = []
        if self.retry_deadline is not None:
            attempt, most = self.retry_attempt
            left = self.retry_seconds_left()
            when = f"Retrying in {left} s" if left > 0 else "Retrying now"
            parts.append(
                Content.styled(f"{when} (attempt {attempt}/{most}) · esc to cancel", "$warning")
            )
        elif self.working_since is not None:
            elapsed = now - self.working_since
            # Counted on the clock's ticks (pacing.py), from the first frame.
            ticks = tick_count(now) - tick_count(self.working_since)
            frame = SPINNER[ticks % len(SPINNER)]
            parts.append(
                Content.assemble(
                    (f"{frame} ", "$primary"),
                    ("Working… ", "$foreground"),
                    (format_elapsed(elapsed), "$muted"),
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
