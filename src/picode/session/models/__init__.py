"""Choosing a model and finding its key (docs/models.md, docs/configuration.md).

The face of ``picode.session.models``: front ends import from here, never from its modules.
Each name is imported on first use, so the face costs nothing on the way to the first frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from picode.session._faces import lazy_names

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

__getattr__ = lazy_names(__name__, _WHERE)
