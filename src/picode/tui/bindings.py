"""The app's own keys, each a priority binding whose id is its action (keymap.toml remaps
by id; docs/keybindings.md lists them)."""

from __future__ import annotations

from textual.binding import Binding


def _binding(key: str, action: str, description: str) -> Binding:
    return Binding(key, action, description, id=action, priority=True, show=False)


APP_BINDINGS: tuple[Binding, ...] = (
    _binding("escape", "interrupt", "Close a list or prompt, else stop picode"),
    _binding("ctrl+c", "clear_or_quit", "Copy, else clear, else interrupt; twice: quit"),
    _binding("ctrl+d", "quit_if_empty", "Quit (editor empty)"),
    _binding("shift+tab", "cycle_mode", "Next mode: ask all → ask edits → auto → plan"),
    _binding("alt+t", "cycle_thinking", "Next thinking level"),
    _binding("ctrl+p", "cycle_model", "Next model with an API key"),
    _binding("ctrl+l", "model_picker", "Choose the model"),
    _binding("ctrl+t", "toggle_thinking", "Fold / unfold thinking blocks"),
    _binding("ctrl+o", "expand_tools", "Expand / fold tool output"),
    _binding("alt+up", "dequeue", "Edit queued messages"),
    _binding("pageup", "scroll_up", "Scroll the conversation up (loads earlier messages)"),
    _binding("pagedown", "scroll_down", "Scroll the conversation down"),
    _binding("ctrl+end", "scroll_to_end", "Jump to the end of the conversation"),
    _binding("ctrl+f", "search", "Search the conversation"),
    _binding("ctrl+g", "external_editor", "Edit the message in $VISUAL / $EDITOR"),
    _binding("ctrl+z", "suspend", "Suspend picode (editor empty)"),
    _binding("ctrl+shift+c", "copy_selection", "Copy the selection"),
)
