"""Choosing a model from a reference: resolve it, clamp the thinking level, warn about keys.

One path for the launcher (``--model``, ``default_model``), the TUI's ``/model`` and the
rpc ``set_model``: what they say about the choice is the same everywhere.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from picode.ai.models import Model, ModelCost, ModelRegistry, ThinkingLevel, unknown_model_warning
from picode.ai.thinking import runs_at

if TYPE_CHECKING:
    from picode.session.models.credentials import Credentials


@dataclass(slots=True)
class ModelChoice:
    model: Model
    #: The level the reference asked for (``:high``), already clamped; None: not asked.
    thinking: ThinkingLevel | None
    warnings: list[str] = field(default_factory=list)


def choose_model(
    registry: ModelRegistry,
    credentials: Credentials | None,
    ref: str,
    *,
    thinking: ThinkingLevel | None = None,
) -> ModelChoice:
    """``ref`` is ``provider/id[:thinking]`` or a bare id; ``thinking`` is a level asked for
    apart from it (it wins). Raises ``UnknownModelError``. ``credentials``: also warn when
    the provider has no key (None: the caller reports that itself)."""
    resolved = registry.resolve(ref)
    model = resolved.model
    warnings = [resolved.warning] if resolved.warning else []
    info = registry.providers.get(model.provider)
    if not model.known and info is not None and info.lists_models:
        env = credentials.env if credentials is not None else None
        model, warnings = _server_limits(registry, credentials, model, resolved.warning, env)
    asked = thinking or resolved.thinking
    if asked is not None:
        asked, note = runs_at(model, asked)
        warnings.extend([note] if note else [])
    if credentials is not None and not credentials.has_key(model):
        info = registry.providers.get(model.provider)
        variables = (*info.api_key_env, *info.login_env) if info is not None else ()
        names = " or ".join(variables) or "its API key"
        warnings.append(
            f"No API key for {model.provider}: set {names} before starting picode, save one"
            f" with /login {model.provider} (picode login {model.provider}), or pick another"
            " model. Prompts will fail until then."
        )
    return ModelChoice(model, asked, warnings)


def _server_limits(
    registry: ModelRegistry,
    credentials: Credentials | None,
    model: Model,
    warning: str | None,
    env: Mapping[str, str] | None = None,
) -> tuple[Model, list[str]]:
    """An id picode's list lacks, under a provider whose server lists its models (local
    servers, OpenRouter): the limits the server states, else the defaults and why."""
    from picode.ai.server_models import (
        LOCAL_TIMEOUT_S,
        REMOTE_TIMEOUT_S,
        ServerModelsError,
        fetch_server_models,
        find_model,
    )
    from picode.session.config.providers import api_key_for, base_url_for

    environ = os.environ if env is None else env
    info = registry.providers[model.provider]
    base_url = base_url_for(registry, model.provider, environ)
    warnings = [warning] if warning else []
    if not base_url:
        return model, warnings
    auth = credentials.auth if credentials is not None else None
    key = api_key_for(registry, model.provider, environ, auth)
    timeout = LOCAL_TIMEOUT_S if info.local else REMOTE_TIMEOUT_S
    try:
        listed = fetch_server_models(base_url, api_key=key, timeout=timeout)
    except ServerModelsError as exc:
        running = " Is it running?" if info.local else ""
        return model, [*warnings, f"{model.provider}: {exc}.{running}"]
    found = find_model(listed, model.id)
    if found is None:
        from picode.ai.untrusted import one_line

        names = ", ".join(one_line(m.id, 60) for m in listed[:8]) or "none"
        more = ", ..." if len(listed) > 8 else ""
        note = f"{model.provider}'s server does not list '{model.id}' (it lists: {names}{more})"
        return model, [*warnings, note]
    if found.context_window is None:
        return model, warnings
    context = found.context_window
    max_tokens = found.max_tokens or min(model.max_tokens, context)
    prices = dict(found.prices)
    cost = ModelCost(**prices) if prices else model.cost
    model = replace(model, context_window=context, max_tokens=max_tokens, cost=cost)
    return model, [unknown_model_warning(model, "the server's")]
