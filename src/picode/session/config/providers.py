"""Custom providers from the config into the model registry; API keys and base URLs."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from picode.ai.models import ModelRegistry, ProviderInfo, model_from_spec

if TYPE_CHECKING:
    from picode.session.config.settings import CustomProvider, Settings
    from picode.session.models.auth import AuthStore


def apply_providers(registry: ModelRegistry, settings: Settings) -> None:
    """Add the ``[providers.*]`` tables (one named like a built-in provider amends it) and
    the ``[model_aliases]``."""
    for name, custom in settings.providers.items():
        existing = registry.providers.get(name)
        if existing is None:
            if custom.api is None:
                continue  # load_config reports and drops these; be safe for hand-made Settings
            info = ProviderInfo(
                name=name,
                api=custom.api,
                base_url=custom.base_url,
                api_key_env=(custom.api_key_env,) if custom.api_key_env else (),
                api_key=custom.api_key,
                default_model=custom.models[0].id if custom.models else None,
                headers=dict(custom.headers),
            )
            registry.add_provider(info)
        else:
            info = existing
            _amend_builtin(registry, info, custom)
        for model in custom.models:
            spec = model.model_dump(exclude_none=True)
            registry.add_model(model_from_spec(spec, info))
    for alias, ref in settings.model_aliases.items():
        registry.aliases[alias.strip().lower()] = ref.strip()


def _amend_builtin(registry: ModelRegistry, info: ProviderInfo, custom: CustomProvider) -> None:
    if custom.api is not None:
        info.api = custom.api
    if custom.base_url:
        info.base_url = custom.base_url
        # A URL written in the config is meant over OLLAMA_HOST (which a server-side setup
        # may set to 0.0.0.0) and AZURE_OPENAI_ENDPOINT; <NAME>_BASE_URL still wins.
        info.host_env = info.endpoint_env = None
    if custom.api_key_env and custom.api_key_env not in info.api_key_env:
        info.api_key_env = (custom.api_key_env, *info.api_key_env)
    if custom.api_key:
        info.api_key = custom.api_key
    if custom.headers:
        info.headers = {**info.headers, **custom.headers}
    # Built-in models captured the old base URL and headers when they were created.
    for model in registry.models(info.name):
        registry.add_model(
            replace(
                model,
                api=custom.api or model.api,
                base_url=custom.base_url or model.base_url,
                headers=tuple({**dict(model.headers), **custom.headers}.items()),
            )
        )


def api_key_for(
    registry: ModelRegistry,
    provider: str,
    env: Mapping[str, str] | None = None,
    auth: AuthStore | None = None,
) -> str | None:
    """The provider's environment variables, then the config's ``api_key``, then the auth file."""
    environ = os.environ if env is None else env
    info = registry.providers.get(provider)
    if info is not None:
        for variable in info.api_key_env:
            value = environ.get(variable, "").strip()
            if value:
                return value
        if info.api_key:
            return info.api_key
    if auth is not None:
        return auth.get(provider)
    return None


def base_url_for(
    registry: ModelRegistry, provider: str, env: Mapping[str, str] | None = None
) -> str | None:
    """The SDK's base-URL variable (e.g. ``ANTHROPIC_BASE_URL``) wins over the configured URL;
    then a host variable (``OLLAMA_HOST``) or an endpoint variable (``AZURE_OPENAI_ENDPOINT``)."""
    environ = os.environ if env is None else env
    info = registry.providers.get(provider)
    if info is None:
        return None
    if info.base_url_env:
        value = environ.get(info.base_url_env, "").strip()
        if value:
            return value
    if info.host_env:
        host = environ.get(info.host_env, "").strip()
        if host:
            return host_base_url(host, info.base_url)
    if info.endpoint_env:
        endpoint = environ.get(info.endpoint_env, "").strip()
        if endpoint:
            return endpoint.rstrip("/") + info.endpoint_path
    return info.base_url


def host_base_url(host: str, default: str | None) -> str:
    """``OLLAMA_HOST`` as Ollama reads it: ``host``, ``host:port`` or a URL (whose port
    defaults to its scheme's); ``0.0.0.0`` (listen on all) is dialled locally. The default
    URL's path (``/v1``) goes after any path given."""
    from urllib.parse import urlsplit

    fallback = urlsplit(default or "http://127.0.0.1")
    has_scheme = "://" in host
    parts = urlsplit(host if has_scheme else f"{fallback.scheme}://{host}")
    hostname = parts.hostname or "127.0.0.1"
    if hostname in ("0.0.0.0", "::"):
        hostname = "127.0.0.1"
    if ":" in hostname:
        hostname = f"[{hostname}]"
    try:
        port = parts.port or (None if has_scheme else fallback.port)
    except ValueError:  # a port that is no number: left for the request to report
        port = fallback.port
    netloc = f"{hostname}:{port}" if port else hostname
    return f"{parts.scheme}://{netloc}{parts.path.rstrip('/')}{fallback.path}"


def missing_endpoint(
    registry: ModelRegistry, provider: str, env: Mapping[str, str] | None = None
) -> str | None:
    """What to set when a provider has no URL of its own and none is configured (Azure)."""
    info = registry.providers.get(provider)
    if info is None or info.base_url or not info.endpoint_env:
        return None
    if base_url_for(registry, provider, env):
        return None
    names = " or ".join(n for n in (info.endpoint_env, info.base_url_env) if n)
    return (
        f"No endpoint for {provider}: set {names} "
        "(e.g. export AZURE_OPENAI_ENDPOINT=https://<resource>.openai.azure.com)"
    )
