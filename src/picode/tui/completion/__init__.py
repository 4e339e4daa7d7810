"""Editor completion: ``/`` commands and ``@`` files, and the popup that lists them.

Names load on first use: the app imports the parts it needs for its first frame only.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from picode.tui.completion.commands import (
        BUILTIN_COMMANDS,
        CommandRegistry,
        ParsedCommand,
        SlashCommand,
        UnknownCommandError,
    )
    from picode.tui.completion.files import FileIndex, FileIndexError
    from picode.tui.completion.popup import CompletionItem, CompletionPopup
    from picode.tui.completion.trigger import Trigger, apply_completion, find_trigger

_WHERE = {
    "BUILTIN_COMMANDS": "commands",
    "CommandRegistry": "commands",
    "ParsedCommand": "commands",
    "SlashCommand": "commands",
    "UnknownCommandError": "commands",
    "FileIndex": "files",
    "FileIndexError": "files",
    "CompletionItem": "popup",
    "CompletionPopup": "popup",
    "Trigger": "trigger",
    "apply_completion": "trigger",
    "find_trigger": "trigger",
}

__all__ = [
    "BUILTIN_COMMANDS",
    "CommandRegistry",
    "CompletionItem",
    "CompletionPopup",
    "FileIndex",
    "FileIndexError",
    "ParsedCommand",
    "SlashCommand",
    "Trigger",
    "UnknownCommandError",
    "apply_completion",
    "find_trigger",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
