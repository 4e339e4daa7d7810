"""Tiny apps that host a widget or a screen under test (not doubles: the code under test runs
in them as it does in the real app)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widget import Widget

from picode.tui.themes import DEFAULT_THEME, default_tokens, load_themes


class TokensHost(App[None]):
    """Shows the given widgets, top to bottom, with picode's colour tokens (no theme files)."""

    def __init__(self, *widgets: Widget) -> None:
        super().__init__()
        self.widgets = widgets

    def compose(self) -> ComposeResult:
        yield from self.widgets

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return default_tokens(True)


class ScrollHost(App[None]):
    """Shows the given widgets in one scrolling column, as the transcript holds them."""

    def __init__(self, *widgets: Any) -> None:
        super().__init__()
        self.widgets = widgets

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield from self.widgets

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return default_tokens(True)


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
