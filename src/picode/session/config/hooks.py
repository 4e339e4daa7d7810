"""``[[hooks.<Event>]]`` tables: shell commands picode runs on its events (docs/hooks.md).

Each event holds a list of hooks; a hook runs when its ``matcher`` matches the event's
target (the tool's name for the tool events, the start's source for ``SessionStart``).
The user's hooks and a trusted project's hooks both run: the lists add up, they do not
replace each other.
"""

from __future__ import annotations

import re
from typing import Literal, TypeAlias, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["HOOK_EVENTS", "HookEvent", "HookSpec"]

HookEvent: TypeAlias = Literal[
    "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "Notification"
]
HOOK_EVENTS: tuple[HookEvent, ...] = get_args(HookEvent)
#: Matchers that match every target.
_EVERYTHING = ("", "*")


class HookSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    command: str = Field(min_length=1)
    #: A regular expression the whole target must match, ignoring case (``bash``,
    #: ``Edit|Write``, ``mcp__github__.*``); empty or ``*``: every target.
    matcher: str = ""
    #: Seconds the command may run before it is killed (and counts as failed).
    timeout_s: float = Field(default=60.0, gt=0, le=3600)

    @field_validator("matcher")
    @classmethod
    def _compiles(cls, value: str) -> str:
        if value not in _EVERYTHING:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a regular expression ({exc})") from None
        return value

    def matches(self, target: str | None) -> bool:
        if self.matcher in _EVERYTHING:
            return True
        if target is None:
            return False
        return re.fullmatch(self.matcher, target, re.IGNORECASE) is not None
