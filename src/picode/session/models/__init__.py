"""Choosing a model and finding its key (docs/models.md, docs/configuration.md).

The face of ``picode.session.models``: front ends import from here, never from its modules.
Each name is imported on first use, so the face costs nothing on the way to the first frame.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from picode.session.models.choice import ModelChoice, choose_model
    from picode.session.models.credentials import Credentials, MissingApiKeyError

_WHERE = {
    "Credentials": "credentials",
    "MissingApiKeyError": "credentials",
    "ModelChoice": "choice",
    "choose_model": "choice",
}

__all__ = [
    "Credentials",
    "MissingApiKeyError",
    "ModelChoice",
    "choose_model",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
