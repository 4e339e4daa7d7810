"""Prompt templates: Markdown files that become slash commands (docs/prompts.md).

The face of ``picode.session.prompts``: front ends import from here, never from its modules.
Each name is imported on first use, so the face costs nothing on the way to the first frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from picode.session._faces import lazy_names

if TYPE_CHECKING:
    from picode.session.prompts.templates import (
        RESERVED_NAMES,
        PromptTemplate,
        expand,
        load_templates,
    )

_WHERE = {
    "PromptTemplate": "templates",
    "RESERVED_NAMES": "templates",
    "expand": "templates",
    "load_templates": "templates",
}

__all__ = [
    "RESERVED_NAMES",
    "PromptTemplate",
    "expand",
    "load_templates",
]

__getattr__ = lazy_names(__name__, _WHERE)
