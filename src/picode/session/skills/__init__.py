"""Agent Skills: folders with a ``SKILL.md`` the model reads when a task matches
(docs/skills.md).

The face of ``picode.session.skills``: front ends import from here, never from its modules.
Each name is imported on first use, so the face costs nothing on the way to the first frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from picode.session._faces import lazy_names

if TYPE_CHECKING:
    from picode.session.skills.discovery import Skill, SkillSet, discover_skills, open_skills
    from picode.session.skills.prompt import invocation_text, skills_prompt

_WHERE = {
    "Skill": "discovery",
    "SkillSet": "discovery",
    "discover_skills": "discovery",
    "open_skills": "discovery",
    "invocation_text": "prompt",
    "skills_prompt": "prompt",
}

__all__ = [
    "Skill",
    "SkillSet",
    "discover_skills",
    "invocation_text",
    "open_skills",
    "skills_prompt",
]

__getattr__ = lazy_names(__name__, _WHERE)
