"""Editor completion: ``/`` commands and ``@`` files, and the popup that lists them."""

from __future__ import annotations

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
