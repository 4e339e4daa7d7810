"""Subagents: the ``task`` tool and agent definitions (docs/subagents.md).

The face of ``picode.session.subagents``: front ends import from here, never from its
modules. Each name is imported on first use, so the face costs nothing on the way to the
first frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from picode.session._faces import lazy_names

if TYPE_CHECKING:
    from picode.session.subagents.definitions import AgentDefinition, discover_agents
    from picode.session.subagents.progress import subagent_state
    from picode.session.subagents.runner import LINK_ENTRY, TASK_TOOL

_WHERE = {
    "AgentDefinition": "definitions",
    "discover_agents": "definitions",
    "subagent_state": "progress",
    "LINK_ENTRY": "runner",
    "TASK_TOOL": "runner",
}

__all__ = ["LINK_ENTRY", "TASK_TOOL", "AgentDefinition", "discover_agents", "subagent_state"]

__getattr__ = lazy_names(__name__, _WHERE)
