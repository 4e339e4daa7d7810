"""A retry sequence in the transcript: one line that changes in place, no repeated errors.

While picode retries a failed request, each failed attempt would leave its own "Error: …"
line (and a cut stream its partial text) above the next. Instead the sequence owns one
notice: "529 Overloaded — retry 2/3 in 4 s" while it waits, replaced by the outcome. Each
failed attempt's error line goes (the notice says it), and of the partial replies of cut
streams only the latest stays, dimmed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from picode.ai.errors import without_retry_after
from picode.ai.types import AssistantMessage, Message, TextContent, ThinkingContent, ToolCall
from picode.session.events import RETRY_CANCELLED, AutoRetryEnd, AutoRetryStart
from picode.tui.widgets.notice import NoticeLevel, NoticeView
from picode.tui.widgets.status import short_error

if TYPE_CHECKING:
    from picode.tui.widgets.messages import AssistantMessageView
    from picode.tui.widgets.transcript import Transcript


#: A long error body is cut on the retry line; its first line says what failed.
ERROR_LIMIT = 160


def _seconds(delay_ms: int) -> str:
    seconds = delay_ms / 1000
    return f"{seconds:.0f} s" if seconds >= 10 or seconds == int(seconds) else f"{seconds:.1f} s"


def _retries(count: int) -> str:
    return f"{count} {'retry' if count == 1 else 'retries'}"


class RetryTracker:
    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        #: The line of the sequence in progress (None between sequences).
        self.line: NoticeView | None = None
        self.error = ""
        self.most = 0
        #: The newest reply that ended in an error: the attempt a retry replaces.
        self.failed: AssistantMessageView | None = None
        #: The partial reply kept from an earlier failed attempt of this sequence.
        self._kept_partial: AssistantMessageView | None = None

    def reply_ended(self, view: AssistantMessageView, failed: bool) -> None:
        self.failed = view if failed else None

    def started(self, event: AutoRetryStart) -> None:
        self.error, self.most = short_error(event.error, ERROR_LIMIT), event.max_attempts
        self._settle_failed_attempt()
        text = f"{event.error} — retry {event.attempt}/{event.max_attempts} in "
        self._show(text + _seconds(event.delay_ms), "warning")

    def ended(self, event: AutoRetryEnd, interrupted: bool) -> None:
        attempt = event.attempt
        if self.line is None and (event.superseded or event.final_error == RETRY_CANCELLED):
            return  # no retry was pending: nothing to say
        error = short_error(event.final_error, ERROR_LIMIT) if event.final_error else self.error
        if event.success:
            self._show(f"Answered after {_retries(attempt)} ({self.error})", "info")
        elif event.superseded:
            self._show(
                f"Retry {attempt}/{self.most} cancelled: your new message is sent instead "
                f"({self.error})",
                "warning",
            )
        elif event.final_error == RETRY_CANCELLED:
            # Esc: the "Interrupted" marker follows; this line keeps what had failed.
            self._show(f"Retry {attempt}/{self.most} cancelled ({self.error})", "warning")
        elif not interrupted:
            self._settle_failed_attempt()
            self._show(f"Gave up after {_retries(attempt)}: {error}", "error")
        self.line, self.failed, self._kept_partial = None, None, None

    def reset(self) -> None:
        """The transcript was cleared (another session)."""
        self.line, self.failed, self._kept_partial = None, None, None

    def _settle_failed_attempt(self) -> None:
        failed, self.failed = self.failed, None
        if failed is None:
            return
        if not failed.drop_error_line():
            self.transcript.remove_entry(failed)
            return
        if self._kept_partial is not None:
            self.transcript.remove_entry(self._kept_partial)
        failed.supersede()
        self._kept_partial = failed
        entries = self.transcript.entries
        if self.line is not None and entries.index(self.line) < entries.index(failed):
            # What became of the partial is said under it, not above it.
            self.transcript.remove_entry(self.line)
            self.line = None

    def _show(self, text: str, level: NoticeLevel) -> None:
        if self.line is None:
            self.line = NoticeView(text, level)
            self.transcript.add(self.line)
        else:
            self.line.set_text(text, level)


@dataclass(frozen=True, slots=True)
class ResumedRetries:
    """A run of failed attempts in a saved session, shown as the live view left it."""

    end: int
    """The index just after the run."""
    kept: int | None
    """The attempt whose partial reply stays, dimmed (the latest that showed anything)."""
    line: tuple[str, NoticeLevel] | None
    """The outcome line; None: one failure that was not retried shows as it is."""


def resumed_retries(messages: Sequence[Message], start: int) -> ResumedRetries:
    """The run of failed replies starting at ``start``.

    The file keeps every attempt but not the retry events, so the outcome is read from what
    follows: another reply means a retry answered; a turn that ends on several failures
    means picode gave up. A single failure before the person's next message (not retryable,
    or a retry cancelled at once) is left as it is."""
    end = start
    while end < len(messages) and _failed(messages[end]):
        end += 1
    last = messages[end - 1]
    assert isinstance(last, AssistantMessage)
    error = short_error(without_retry_after(last.error_message or ""), ERROR_LIMIT)
    shown = [i for i in range(start, end) if _shows_anything(messages[i])]
    kept = shown[-1] if shown else None
    retries = end - start
    if end < len(messages) and isinstance(messages[end], AssistantMessage):
        return ResumedRetries(end, kept, (f"Answered after {_retries(retries)} ({error})", "info"))
    if retries > 1:
        return ResumedRetries(
            end, kept, (f"Gave up after {_retries(retries - 1)}: {error}", "error")
        )
    return ResumedRetries(end, None, None)


def _failed(message: Message) -> bool:
    return isinstance(message, AssistantMessage) and message.stop_reason == "error"


def _shows_anything(message: Message) -> bool:
    """What ``completed_assistant_view`` draws besides the error line."""
    if not isinstance(message, AssistantMessage):
        return False
    for block in message.content:
        match block:
            case TextContent(text=text) if text.strip():
                return True
            case ThinkingContent(thinking=thinking) if thinking.strip():
                return True
            case ToolCall():
                return True
    return False
