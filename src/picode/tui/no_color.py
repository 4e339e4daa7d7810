"""NO_COLOR (no-color.org) done as it asks."""

from __future__ import annotations

from typing import Any


def without_colour(app: Any) -> None:
    """NO_COLOR (no-color.org) asks for no colour at all, but Textual turns it into greys
    and grey backgrounds (its Monochrome filter): strip the colours instead, keeping bold,
    underline and reverse, so the cursor and selections still show."""
    from textual.filter import Monochrome, NoColor

    app._filters = [f for f in app._filters if not isinstance(f, Monochrome)]
    app._filters.append(NoColor())
