"""``[limits]`` in config.toml: how far the agent goes on its own before it stops and waits
for you (docs/configuration.md, "Limits").

Both count from your last message (a prompt, a steer or a follow-up): a run you keep
talking to is never stopped, one left alone stops where you said."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from picode.ai.types import AssistantMessage, Message


class LimitSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    #: Model requests in a row without a message from you; 0: no limit.
    max_turns: int = Field(default=0, ge=0)
    #: US dollars spent in a row without a message from you; 0: no limit.
    max_cost_usd: float = Field(default=0.0, ge=0)


def limit_reached(limits: LimitSettings, requests: int, recent: Sequence[Message]) -> str | None:
    """Why the agent stops before its next request, or None to go on. ``requests``: those
    made since your last message; ``recent``: the messages since then."""
    if limits.max_turns and requests >= limits.max_turns:
        noun = "request" if requests == 1 else "requests"
        return (
            f"Stopped after {requests} model {noun} in a row without a message from you "
            f"(limit: max_turns = {limits.max_turns}). Send a message to go on."
        )
    if limits.max_cost_usd:
        spent = sum(m.usage.cost.total for m in recent if isinstance(m, AssistantMessage))
        if spent >= limits.max_cost_usd:
            return (
                f"Stopped: ${spent:.2f} spent in a row without a message from you "
                f"(limit: max_cost_usd = {limits.max_cost_usd:g}). Send a message to go on."
            )
    return None
