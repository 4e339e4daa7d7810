"""SDK client settings shared by the provider modules: API key, base URL, headers and
timeouts, decided once for every SDK (client reuse across requests is ``_client_cache``)."""

from __future__ import annotations

import os
import re
from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from picode.ai.errors import MissingApiKeyError, ProviderSetupError
from picode.ai.models import Model, builtin_key_variables, builtin_provider_spec

if TYPE_CHECKING:
    from picode.ai.options import StreamOptions

#: Sent to servers that need no key (local OpenAI-compatible servers); the SDKs insist on one.
PLACEHOLDER_API_KEY = "picode-no-key"


def api_key_env_name(provider: str) -> str:
    """The conventional variable for a provider's key: ``my-llm`` -> ``MY_LLM_API_KEY``."""
    return re.sub(r"[^A-Z0-9]+", "_", provider.upper()).strip("_") + "_API_KEY"


def resolve_api_key(model: Model, options: StreamOptions, *, required: bool = True) -> str | None:
    """``options.api_key``, else the first set variable of the provider's (providers.json) and
    its conventional one; raises ``MissingApiKeyError`` naming them when ``required``."""
    if options.api_key:
        return options.api_key
    variables = [*builtin_key_variables(model.provider), api_key_env_name(model.provider)]
    names = list(dict.fromkeys(variables))
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    if not required:
        return None
    listed = " or ".join(names)
    raise MissingApiKeyError(
        f"No API key for provider '{model.provider}': set {listed}, "
        "or configure an API key for this provider"
    )


def request_headers(model: Model, options: StreamOptions) -> dict[str, str]:
    """The model's configured headers, overridden by the request's own."""
    headers = dict(model.headers)
    headers.update(options.headers)
    return headers


def base_url_for(model: Model, options: StreamOptions) -> str | None:
    return options.base_url or model.base_url


@dataclass(slots=True, frozen=True)
class ClientSettings:
    """What an SDK client is built from. Every client gets ``max_retries=0`` (the session
    retries, with its own policy and status line) and these two timeouts."""

    api_key: str | None
    base_url: str | None
    headers: dict[str, str]
    #: The longest silence allowed between two reads of a stream.
    idle_timeout_s: float
    connect_timeout_s: float

    def cache_key(self, api: str) -> Hashable:
        headers = tuple(sorted(self.headers.items()))
        return (api, self.api_key, self.base_url, headers, self.idle_timeout_s)


def client_settings(
    model: Model, options: StreamOptions, *, key_required: bool = True
) -> ClientSettings:
    from picode.ai.options import DEFAULT_CONNECT_TIMEOUT_S

    idle = options.resolved_idle_timeout()
    endpoint_env = builtin_provider_spec(model.provider).get("endpoint_env")
    if endpoint_env and not base_url_for(model, options):
        # Without it the SDK would send the request, and its key, to its own default host.
        raise ProviderSetupError(
            f"No endpoint for {model.provider}: set {endpoint_env} "
            "(e.g. https://<resource>.openai.azure.com)"
        )
    return ClientSettings(
        api_key=resolve_api_key(model, options, required=key_required),
        base_url=base_url_for(model, options),
        headers=request_headers(model, options),
        idle_timeout_s=idle,
        # A connect timeout longer than the idle one would let a dead host outwait it.
        connect_timeout_s=min(idle, DEFAULT_CONNECT_TIMEOUT_S),
    )
