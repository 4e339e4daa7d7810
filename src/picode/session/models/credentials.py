"""API keys and base URLs for a model, from the environment, config and the auth file."""

from __future__ import annotations

import os
from collections.abc import Mapping

from picode.ai.errors import MissingApiKeyError
from picode.ai.models import Model, ModelRegistry
from picode.session.config.providers import api_key_for, base_url_for, missing_endpoint
from picode.session.models.auth import AuthStore
from picode.session.paths import Paths
from picode.session.safety.secrets import remember_secret

__all__ = ["Credentials", "MissingApiKeyError"]


class Credentials:
    def __init__(
        self, registry: ModelRegistry, paths: Paths, env: Mapping[str, str] | None = None
    ) -> None:
        self.registry = registry
        self.env = env if env is not None else os.environ
        self.auth = AuthStore(paths.auth_file)

    def _needs_key(self, model: Model) -> bool:
        info = self.registry.providers.get(model.provider)
        return info is not None and info.needs_key

    def api_key(self, model: Model) -> str | None:
        """The configured key, or None: a provider without a declared key variable then
        tries ``<PROVIDER>_API_KEY`` and, for a server on this machine, needs none."""
        if model.provider not in self.registry.providers:
            return None
        key = api_key_for(self.registry, model.provider, self.env, self.auth) or None
        remember_secret(key)
        return key

    def remember_all(self) -> None:
        """Remember every provider's key, used or not, so none is written anywhere."""
        for provider in self.registry.providers:
            remember_secret(api_key_for(self.registry, provider, self.env, self.auth))

    def has_key(self, model: Model) -> bool:
        info = self.registry.providers.get(model.provider)
        if info is not None and info.key_optional:
            # Bedrock, Vertex: usable with their key or with the other login set up.
            logged_in = any(self.env.get(name, "").strip() for name in info.login_env)
            return logged_in or bool(self.api_key(model))
        return not self._needs_key(model) or bool(self.api_key(model))

    def require(self, model: Model) -> None:
        missing = missing_endpoint(self.registry, model.provider, self.env)
        if missing:
            raise MissingApiKeyError(missing)
        info = self.registry.providers.get(model.provider)
        if info is None or info.key_optional or self.has_key(model):
            return  # Bedrock, Vertex: another login may need no variable; the request says
        names = " or ".join(info.api_key_env)
        raise MissingApiKeyError(
            f"No API key for {model.provider}. Set {names} (e.g. export {info.api_key_env[0]}=...),"
            f" save one with picode login {model.provider} (/login in the TUI), or choose another"
            " model (--model; /model in the TUI)."
        )

    def base_url(self, model: Model) -> str | None:
        if model.provider not in self.registry.providers:
            return model.base_url
        override = base_url_for(self.registry, model.provider, self.env)
        return override or model.base_url
