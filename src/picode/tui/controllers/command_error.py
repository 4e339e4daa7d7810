"""The one exception command handlers raise for a person's mistake."""

from __future__ import annotations


class CommandError(Exception):
    """A command could not run as typed; the message says why (the text goes back)."""
