"""What one request is asked to do beyond its context: limits, thinking, abort, endpoint."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from picode.ai.abort import AbortSignal
    from picode.ai.models import Model, ThinkingLevel

DEFAULT_IDLE_TIMEOUT_S = 300.0
DEFAULT_CONNECT_TIMEOUT_S = 20.0


@dataclass(slots=True)
class StreamOptions:
    max_tokens: int | None = None
    thinking: ThinkingLevel | None = None
    signal: AbortSignal | None = None
    api_key: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    base_url: str | None = None
    temperature: float | None = None
    session_id: str | None = None
    #: Seconds without a byte from the server before the request fails (retryable).
    idle_timeout: float | None = None

    def resolved_idle_timeout(self) -> float:
        if self.idle_timeout is not None:
            return self.idle_timeout
        env = os.environ.get("PICODE_IDLE_TIMEOUT")
        try:
            return float(env) if env else DEFAULT_IDLE_TIMEOUT_S
        except ValueError:
            return DEFAULT_IDLE_TIMEOUT_S

    def resolved_max_tokens(self, model: Model) -> int:
        return self.max_tokens or model.max_tokens
