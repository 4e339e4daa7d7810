"""Choosing a model from a reference: resolve it, clamp the thinking level, warn about keys.

One path for the launcher (``--model``, ``default_model``), the TUI's ``/model`` and the
rpc ``set_model``: what they say about the choice is the same everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from picode.ai.models import Model, ModelRegistry, ThinkingLevel
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
    asked = thinking or resolved.thinking
    if asked is not None:
        asked, note = runs_at(model, asked)
        warnings.extend([note] if note else [])
    if credentials is not None and not credentials.has_key(model):
        info = registry.providers.get(model.provider)
        names = " or ".join(info.api_key_env) if info is not None else "its API key"
        warnings.append(
            f"No API key for {model.provider}: set {names} before starting picode, or pick "
            "another model. Prompts will fail until then."
        )
    return ModelChoice(model, asked, warnings)
