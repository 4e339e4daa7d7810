"""The session's model and thinking level: reading, choosing and cycling them.

A part of ``AgentSession`` (it inherits this), kept beside model choice and keys."""

from __future__ import annotations

import asyncio
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING

from picode.ai.models import Model, ThinkingLevel, next_thinking_level
from picode.ai.thinking import runs_at, thinking_request
from picode.session.events import AnySessionEvent, ModelChanged, ThinkingLevelChanged
from picode.session.models.choice import ModelChoice, choose_model

if TYPE_CHECKING:
    from picode.agent.agent import Agent
    from picode.ai.models import ModelRegistry, ProviderInfo
    from picode.session.config.settings import Settings
    from picode.session.models.credentials import Credentials
    from picode.session.models.keys import ForgottenKey, SavedKey
    from picode.session.store.recorder import SessionRecorder


class ModelControls:
    _agent: Agent
    _recorder: SessionRecorder
    _registry: ModelRegistry
    _credentials: Credentials
    _settings: Settings

    def _emit_soon(self, event: AnySessionEvent) -> None:
        raise NotImplementedError

    @property
    def model(self) -> Model:
        return self._agent.state.model

    @property
    def thinking(self) -> ThinkingLevel:
        return self._agent.state.thinking

    @property
    def thinking_label(self) -> str:
        """The thinking level as the model is actually asked ("low (the lowest this model
        allows)" when it cannot do what was set)."""
        return thinking_request(self.model, self.thinking).label

    @property
    def context_window(self) -> int:
        return self.model.context_window

    def _set_model(self, model: Model) -> None:
        self._agent.set_model(model)
        self._recorder.record_model(model)
        self._emit_soon(ModelChanged(model.provider, model.id))

    async def select_model(self, ref: str) -> ModelChoice:
        """Switch to ``ref`` (``provider/id[:thinking]`` or an alias); the choice says what
        to warn about. Raises ``UnknownModelError``; nothing changes then. An id only its
        server knows (a local server, OpenRouter) is looked up there, off the event loop."""
        choice = await asyncio.to_thread(choose_model, self._registry, self._credentials, ref)
        if choice.model.ref != self.model.ref:
            self._set_model(choice.model)
        if choice.thinking is not None:
            self.set_thinking_level(choice.thinking)
        return choice

    def known_models(self) -> list[Model]:
        """Every model picode knows, keyed or not, in the registry's order."""
        return self._registry.models()

    def model_aliases(self) -> dict[str, str]:
        """Each alias (``sonnet``, and those of ``[model_aliases]``) and the reference it
        stands for."""
        return dict(self._registry.aliases)

    def provider_info(self, provider: str) -> ProviderInfo | None:
        """How ``provider`` is reached (its key variables, its login), when picode knows it."""
        return self._registry.providers.get(provider)

    def has_key(self, model: Model) -> bool:
        """The model's provider has a key, or needs none."""
        return self._credentials.has_key(model)

    @property
    def api_key_file(self) -> Path:
        """Where ``save_api_key`` keeps keys (mode 0600)."""
        return self._credentials.auth.path

    def check_key_provider(self, provider: str) -> None:
        """Raise ``ApiKeyError`` (with the names it may have meant) unless picode knows
        ``provider``: what to check before asking the person for a key."""
        from picode.session.models.keys import check_provider

        check_provider(self._registry, provider)

    def save_api_key(self, provider: str, key: str) -> SavedKey:
        """Keep ``key`` as ``provider``'s in picode's auth file (``/login``): the next request
        carries it, unless a variable or config.toml gives a key first (``used_instead``).
        Raises ``ApiKeyError``; nothing changed then."""
        from picode.session.models.keys import save_api_key

        credentials = self._credentials
        return save_api_key(self._registry, credentials.auth, credentials.env, provider, key)

    def forget_api_key(self, provider: str) -> ForgottenKey:
        """Remove ``provider``'s key from picode's auth file (``/logout``). Raises
        ``ApiKeyError``."""
        from picode.session.models.keys import forget_api_key

        credentials = self._credentials
        return forget_api_key(self._registry, credentials.auth, credentials.env, provider)

    def base_url(self, model: Model) -> str | None:
        """Where requests for ``model`` go (an override from the environment or config wins)."""
        return self._credentials.base_url(model)

    def require_key(self) -> None:
        """Raise ``MissingApiKeyError`` (saying what to set) when the current model cannot
        be asked: what a front end checks before it says a prompt started."""
        self._credentials.require(self.model)

    def available_models(self) -> list[Model]:
        """Models whose provider has a key (or needs none), in the registry's order."""
        return [m for m in self.known_models() if self.has_key(m)]

    def _cycled_models(self) -> list[Model]:
        """What ``cycle_model`` goes through: the available models, only those that
        ``enabled_models`` names when it is set."""
        models = self.available_models()
        patterns = self._settings.enabled_models
        if not patterns:
            return models
        wanted = [self._registry.aliases.get(p.lower(), p).lower() for p in patterns]
        return [
            m
            for m in models
            if any(fnmatchcase(m.ref.lower(), p) or fnmatchcase(m.id.lower(), p) for p in wanted)
        ]

    def cycle_model(self, direction: int = 1) -> Model:
        models = self._cycled_models() or [self.model]
        refs = [m.ref for m in models]
        index = refs.index(self.model.ref) if self.model.ref in refs else -1
        model = models[(index + direction) % len(models)]
        if model.ref != self.model.ref:
            self._set_model(model)
        return model

    def set_thinking_level(self, level: ThinkingLevel) -> None:
        self._agent.set_thinking(level)
        self._recorder.record_thinking(level)
        self._emit_soon(ThinkingLevelChanged(level))

    def cycle_thinking_level(self) -> ThinkingLevel:
        level, _ = runs_at(self.model, next_thinking_level(self.thinking))
        self.set_thinking_level(level)
        return level
