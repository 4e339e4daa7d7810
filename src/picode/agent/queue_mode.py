"""How queued steering and follow-up messages are taken: one per turn, or all at once.

Apart from the agent so that the configuration can name the choice without importing it."""

from __future__ import annotations

from typing import Literal, TypeAlias, get_args

QueueMode: TypeAlias = Literal["one-at-a-time", "all"]
QUEUE_MODES: tuple[QueueMode, ...] = get_args(QueueMode)
