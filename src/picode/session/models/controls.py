"""The session's model and thinking level: reading, choosing and cycling them.

A part of ``AgentSession`` (it inherits this), kept beside model choice and keys."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from picode.ai.models import Model, ThinkingLevel, next_thinking_level
from picode.ai.thinking import runs_at, thinking_request
from picode.session.events import AnySessionEvent, ModelChanged, ThinkingLevelChanged
from picode.session.models.choice import ModelChoice, choose_model

if TYPE_CHECKING:
    from picode.agent.agent import Agent
    from picode.ai.models import ModelRegistry
    from picode.session.models.credentials import Credentials
    from picode.session.store.recorder import SessionRecorder


class ModelControls:
    agent: Agent
    recorder: SessionRecorder
    registry: ModelRegistry
    credentials: Credentials

    def emit_soon(self, event: AnySessionEvent) -> None:
        raise NotImplementedError

    @property
    def model(self) -> Model:
        return self.agent.state.model

    @property
    def thinking(self) -> ThinkingLevel:
        return self.agent.state.thinking

    @property
    def thinking_label(self) -> str:
        """The thinking level as the model is actually asked ("low (the lowest this model
        allows)" when it cannot do what was set)."""
        return thinking_request(self.model, self.thinking).label

    @property
    def context_window(self) -> int:
        return self.model.context_window

    def set_model(self, model: Model) -> None:
        self.agent.set_model(model)
        self.recorder.record_model(model)
        self.emit_soon(ModelChanged(model.provider, model.id))

    async def select_model(self, ref: str) -> ModelChoice:
        """Switch to ``ref`` (``provider/id[:thinking]`` or an alias); the choice says what
        to warn about. Raises ``UnknownModelError``; nothing changes then. An id only its
        server knows (a local server, OpenRouter) is looked up there, off the event loop."""
        choice = await asyncio.to_thread(choose_model, self.registry, self.credentials, ref)
        if choice.model.ref != self.model.ref:
            self.set_model(choice.model)
        if choice.thinking is not None:
            self.set_thinking_level(choice.thinking)
        return choice

    def available_models(self) -> list[Model]:
        """Models whose provider has a key (or needs none), in the registry's order."""
        return [m for m in self.registry.models() if self.credentials.has_key(m)]

    def cycle_model(self, direction: int = 1) -> Model:
        models = self.available_models() or [self.model]
        refs = [m.ref for m in models]
        index = refs.index(self.model.ref) if self.model.ref in refs else -1
        model = models[(index + direction) % len(models)]
        if model.ref != self.model.ref:
            self.set_model(model)
        return model

    def set_thinking_level(self, level: ThinkingLevel) -> None:
        self.agent.set_thinking(level)
        self.recorder.record_thinking(level)
        self.emit_soon(ThinkingLevelChanged(level))

    def cycle_thinking_level(self) -> ThinkingLevel:
        level, _ = runs_at(self.model, next_thinking_level(self.thinking))
        self.set_thinking_level(level)
        return level
