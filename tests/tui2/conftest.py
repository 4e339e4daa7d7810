"""Helpers for the pickers, completion, approval and export tests: tiny host apps."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widget import Widget

from picode.tui.themes import DEFAULT_THEME, default_tokens, load_themes
from tests.support import FakeClock as FakeClock
from tests.support import pump_until
from tests.support import run as run

#: Tests here wait on an app: the Textual flavour, under the usual name.
wait_until = pump_until

SIZE = (100, 30)


class ThemedApp(App[None]):
    """picode's themes and colour tokens, as the real app has them."""

    def __init__(self) -> None:
        super().__init__()
        for theme in load_themes().themes.values():
            self.register_theme(theme)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return default_tokens(True)

    def on_mount(self) -> None:
        self.theme = DEFAULT_THEME


class ScreenHost(ThemedApp):
    """Pushes ``make_screen()`` at start and records what it is dismissed with."""

    def __init__(self, make_screen: Callable[[], Screen[Any]]) -> None:
        super().__init__()
        self.make_screen = make_screen
        self.results: list[Any] = []
        self.picker: Screen[Any] | None = None

    def on_mount(self) -> None:
        super().on_mount()
        self.picker = self.make_screen()
        self.push_screen(self.picker, self.results.append)


class WidgetHost(ThemedApp):
    """Shows the given widgets, top to bottom."""

    def __init__(self, *widgets: Widget) -> None:
        super().__init__()
        self.widgets = widgets

    def compose(self) -> ComposeResult:
        yield from self.widgets


def screen_text(app: App[Any]) -> str:
    """What the current screen shows, as plain text lines."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())
