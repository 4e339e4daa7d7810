"""SDK client settings shared by the provider modules: API key, base URL, headers.

(Client reuse across requests lives in ``_client_cache``.)
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from picode.ai.errors import MissingApiKeyError
from picode.ai.models import Model, builtin_key_variables

if TYPE_CHECKING:
    from picode.ai.stream import StreamOptions

#: Sent to servers that need no key (local OpenAI-compatible servers); the SDKs insist on one.
PLACEHOLDER_API_KEY = "picode-no-key"


def api_key_env_name(provider: str) -> str:
    """The conventional variable for a provider's key: ``my-llm`` -> ``MY_LLM_API_KEY``."""
    return re.sub(r"[^A-Z0-9]+", "_", provider.upper()).strip("_") + "_API_KEY"


def resolve_api_key(model: Model, options: StreamOptions, *, required: bool = True) -> str | None:
    """``options.api_key``, else the first set variable of the provider's (models.json) and
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
