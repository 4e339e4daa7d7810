"""Saving and forgetting a provider's API key in picode's auth file (``/login``,
``picode login``; docs/configuration.md "The auth file").

A key saved here is the last place picode looks (``config.providers.api_key_for``): a
variable such as ``ANTHROPIC_API_KEY``, or an ``api_key`` in config.toml, is used before
it. Saving says so, rather than leave the person wondering why their new key is not used.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from picode.ai.models import ModelRegistry
from picode.ai.redaction import remember_secret
from picode.session.models.auth import AuthFileError, AuthStore


class ApiKeyError(Exception):
    """The key cannot be saved or removed; the message says why, and nothing changed."""


@dataclass(frozen=True, slots=True)
class SavedKey:
    provider: str
    path: Path
    #: What is used instead of the saved key (``ANTHROPIC_API_KEY``, ``api_key in
    #: config.toml``); None when the saved key is the one requests carry.
    used_instead: str | None

    def said(self) -> str:
        return f"Saved the key for {self.provider} in {self.path} (readable by you only)."

    def warning(self) -> str | None:
        if self.used_instead is None:
            return None
        return (
            f"{self.used_instead} gives {self.provider} a key before the saved one, so requests "
            "still use that: remove it to use the key saved now."
        )


@dataclass(frozen=True, slots=True)
class ForgottenKey:
    provider: str
    path: Path
    #: False: the auth file held no key for the provider.
    removed: bool
    #: Where the provider's key still comes from, if anywhere.
    still_from: str | None

    def said(self) -> str:
        if self.removed:
            return f"Removed the key for {self.provider} from {self.path}."
        return f"{self.path} holds no key for {self.provider}."

    def warning(self) -> str | None:
        if self.still_from is None:
            return None
        return f"{self.provider} still has a key: {self.still_from}."


def key_source(registry: ModelRegistry, env: Mapping[str, str], provider: str) -> str | None:
    """What gives ``provider`` a key before the auth file: a variable's name, or config."""
    info = registry.providers.get(provider)
    if info is None:
        return None
    for variable in info.api_key_env:
        if env.get(variable, "").strip():
            return variable
    return "api_key in config.toml" if info.api_key else None


def save_api_key(
    registry: ModelRegistry, auth: AuthStore, env: Mapping[str, str], provider: str, key: str
) -> SavedKey:
    """Store ``key`` as ``provider``'s in the auth file (mode 0600). Raises ``ApiKeyError``."""
    check_provider(registry, provider)
    key = key.strip()
    if not key:
        raise ApiKeyError(f"No key given for {provider}: nothing was saved.")
    if any(char.isspace() or not char.isprintable() for char in key):
        raise ApiKeyError(
            f"That does not look like an API key for {provider} (it has spaces, line breaks "
            "or control characters): nothing was saved."
        )
    remember_secret(key)  # masked in every stream and file from now on, saved or not
    try:
        auth.set(provider, key)
    except AuthFileError as exc:
        raise ApiKeyError(str(exc)) from None
    return SavedKey(provider, auth.path, key_source(registry, env, provider))


def forget_api_key(
    registry: ModelRegistry, auth: AuthStore, env: Mapping[str, str], provider: str
) -> ForgottenKey:
    """Remove ``provider``'s key from the auth file. Raises ``ApiKeyError``."""
    check_provider(registry, provider)
    try:
        removed = auth.remove(provider)
    except AuthFileError as exc:
        raise ApiKeyError(str(exc)) from None
    return ForgottenKey(provider, auth.path, removed, key_source(registry, env, provider))


def check_provider(registry: ModelRegistry, provider: str) -> None:
    if provider in registry.providers:
        return
    near = difflib.get_close_matches(provider, list(registry.providers), 3, 0.5)
    hint = f" Did you mean {', '.join(near)}?" if near else ""
    raise ApiKeyError(
        f"Unknown provider '{provider}'.{hint} Known: {', '.join(sorted(registry.providers))}."
    )
