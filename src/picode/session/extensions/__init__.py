"""Python extensions: finding, importing and running them (docs/extensions.md).

The face of ``picode.session.extensions``: front ends import from here, never from its modules.
Each name is imported on first use, so the face costs nothing on the way to the first frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from picode.session._faces import lazy_names

if TYPE_CHECKING:
    from picode.session.extensions.loader import ExtensionHost

_WHERE = {
    "ExtensionHost": "loader",
}

__all__ = [
    "ExtensionHost",
]

__getattr__ = lazy_names(__name__, _WHERE)
