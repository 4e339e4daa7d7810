"""The session's prompt templates: loaded as it opens, expanded when a message is sent.

A part of ``AgentSession`` (it inherits this). Project templates load in an untrusted
folder too: they are text the person chooses to send, like typing it (docs/prompts.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from picode.session.prompts.templates import (
    PromptTemplate,
    expand,
    load_templates,
    parse_invocation,
)

if TYPE_CHECKING:
    from pathlib import Path

    from picode.ai.models import Model, ThinkingLevel
    from picode.session.models.choice import ModelChoice
    from picode.session.skills import SkillSet

#: ``/skill:name args`` asks the model to use that skill now (docs/skills.md).
SKILL_PREFIX = "/skill:"


class PromptControls:
    _templates: dict[str, PromptTemplate]
    _skills: SkillSet

    def notify(self, text: str, level: str = "info", source: str | None = None) -> None:
        raise NotImplementedError

    @property
    def model(self) -> Model:
        raise NotImplementedError

    @property
    def thinking(self) -> ThinkingLevel:
        raise NotImplementedError

    async def select_model(self, ref: str) -> ModelChoice:
        raise NotImplementedError

    def set_thinking_level(self, level: ThinkingLevel) -> None:
        raise NotImplementedError

    def _set_model(self, model: Model) -> None:
        raise NotImplementedError

    def _load_templates(self, config_dir: Path | None, cwd: Path) -> None:
        loaded = load_templates(config_dir, cwd)
        self._templates = loaded.templates
        for warning in loaded.warnings:
            self.notify(warning, "warning", "prompts")

    @property
    def prompt_templates(self) -> list[PromptTemplate]:
        """The templates ``prompt`` expands, by name."""
        return sorted(self._templates.values(), key=lambda t: t.name)

    def _expand_template(self, text: str) -> tuple[str, PromptTemplate | None]:
        """``/name args`` of a template, or ``/skill:name args``, as the model gets it."""
        if text.startswith(SKILL_PREFIX):
            name, _, arguments = text[len(SKILL_PREFIX) :].partition(" ")
            skill = next((s for s in self._skills.skills if s.name == name.strip()), None)
            if skill is not None:
                from picode.session.skills import invocation_text

                return invocation_text(skill, arguments), None
        found = parse_invocation(text, self._templates)
        if found is None:
            return text, None
        template, arguments = found
        return expand(template, arguments), template

    async def _template_model(
        self, template: PromptTemplate | None
    ) -> tuple[Model, ThinkingLevel] | None:
        """Switch to the template's ``model`` for this message; the model and thinking level
        to go back to afterwards (None when nothing changed). A model that cannot be used is
        a warning: the message goes to the current model rather than not at all."""
        if template is None or template.model is None:
            return None
        before = (self.model, self.thinking)
        try:
            await self.select_model(template.model)
        except Exception as exc:
            self.notify(
                f"/{template.name}: model {template.model!r} cannot be used ({exc}); "
                f"sent to {before[0].ref}.",
                "warning",
                "prompts",
            )
            return None
        return before if (self.model.ref, self.thinking) != (before[0].ref, before[1]) else None

    def _restore_model(self, before: tuple[Model, ThinkingLevel] | None) -> None:
        if before is None:
            return
        model, thinking = before
        if model.ref != self.model.ref:
            self._set_model(model)
        if thinking != self.thinking:
            self.set_thinking_level(thinking)
