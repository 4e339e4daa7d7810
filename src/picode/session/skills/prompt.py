"""What the model sees of skills: a list in the system prompt, and the message of
``/skill:name`` (docs/skills.md). Bodies never go in: the model reads them itself."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from picode.session.skills.discovery import Skill

_INTRO = """\
# Skills

Skills are folders of instructions (and sometimes scripts or reference files) for particular
tasks. When a task matches a skill's description, read its SKILL.md with the read tool before
you start and follow it; paths in it are relative to the skill's folder. Read only the skills
you need."""


def skills_prompt(skills: Sequence[Skill], tools: Collection[str]) -> str | None:
    """The system prompt's block listing each skill's name, description and SKILL.md path;
    None when there are none, or no read tool among ``tools`` to read them with."""
    if not skills or "read" not in tools:
        return None
    entries = [
        f"- name: {skill.name}\n  description: {_one_line(skill.description)}\n"
        f"  location: {skill.path}"
        for skill in skills
    ]
    return _INTRO + "\n\n" + "\n".join(entries)


def invocation_text(skill: Skill, arguments: str = "") -> str:
    """The message ``/skill:name arguments`` sends: use that skill now."""
    text = (
        f'Use the skill "{skill.name}" now. Read its instructions at {skill.path} with the '
        f"read tool and follow them (paths in it are relative to {skill.path.parent})."
    )
    arguments = arguments.strip()
    if arguments:
        text += f"\n\nArguments: {arguments}"
    return text


def _one_line(text: str) -> str:
    return " ".join(text.split())
