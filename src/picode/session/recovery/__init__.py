"""Keeping a turn going: retries, compaction, stream rules and the edit guard
(docs/sessions.md, docs/stream-rules.md).

The face of ``picode.session.recovery``: front ends import from here, never from its modules.
Each name is imported on first use, so the face costs nothing on the way to the first frame.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from picode.session.recovery.planner import RecoveryPlanner

_WHERE = {
    "RecoveryPlanner": "planner",
}

__all__ = [
    "RecoveryPlanner",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
