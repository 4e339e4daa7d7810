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
    from picode.session.models.keys import ApiKeyError, ForgottenKey, SavedKey

_WHERE = {
    "ApiKeyError": "keys",
    "ForgottenKey": "keys",
    "SavedKey": "keys",
    "Credentials": "credentials",
    "MissingApiKeyError": "credentials",
    "ModelChoice": "choice",
    "choose_model": "choice",
}

__all__ = [
    "ApiKeyError",
    "Credentials",
    "ForgottenKey",
    "MissingApiKeyError",
    "ModelChoice",
    "SavedKey",
    "choose_model",
]

__getattr__ = lazy_names(__name__, _WHERE)
