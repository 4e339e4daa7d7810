"""Auto-retry policy (docs/sessions.md): which failures are retried, and how long to wait."""

from __future__ import annotations

from dataclasses import dataclass

from picode.ai.errors import is_context_overflow, is_transient_error, retry_after_from_message
from picode.ai.types import AssistantMessage


@dataclass(slots=True)
class RetryPolicy:
    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    max_delay_ms: int = 60_000

    def should_retry(self, message: AssistantMessage, attempt: int) -> bool:
        """``attempt`` is the number of the retry about to happen (1-based)."""
        if not self.enabled or attempt > self.max_retries:
            return False
        if message.stop_reason != "error":
            return False
        text = message.error_message
        return is_transient_error(text) and not is_context_overflow(text)

    def delay_ms(self, message: AssistantMessage, attempt: int) -> int:
        """Exponential back-off (2 s, 4 s, 8 s by default), or the server's longer
        retry-after, capped so a hostile header cannot park the session for hours."""
        backoff: int = self.base_delay_ms * 2 ** (attempt - 1)
        hinted = retry_after_from_message(message.error_message)
        if hinted is not None:
            backoff = max(backoff, int(hinted * 1000))
        return min(backoff, self.max_delay_ms)
