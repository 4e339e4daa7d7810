"""Modal pickers: push one with ``app.push_screen(picker, callback)`` or
``await app.push_screen_wait(picker)``; each dismisses with its result or None (Esc)."""

from __future__ import annotations

from picode.tui.pickers.base import PickerScreen, PickList
from picode.tui.pickers.fork_picker import ForkPicker
from picode.tui.pickers.model_picker import ModelPicker, format_price, format_tokens
from picode.tui.pickers.session_picker import (
    SessionLister,
    SessionPicker,
    format_size,
    relative_time,
)
from picode.tui.pickers.theme_picker import ThemePicker
from picode.tui.pickers.thinking_picker import ThinkingPicker

__all__ = [
    "ForkPicker",
    "ModelPicker",
    "PickList",
    "PickerScreen",
    "SessionLister",
    "SessionPicker",
    "ThemePicker",
    "ThinkingPicker",
    "format_price",
    "format_size",
    "format_tokens",
    "relative_time",
]
