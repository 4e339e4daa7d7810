"""Keeping a turn going: retries, compaction, stream rules and the edit guard
(docs/sessions.md, docs/stream-rules.md).

The face of ``picode.session.recovery``: front ends import from here, never from its modules.
Each name is imported on first use, so the face costs nothing on the way to the first frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from picode.session._faces import lazy_names

if TYPE_CHECKING:
    from picode.session.recovery.planner import RecoveryPlanner

_WHERE = {
    "RecoveryPlanner": "planner",
}

__all__ = [
    "RecoveryPlanner",
]

__getattr__ = lazy_names(__name__, _WHERE)
