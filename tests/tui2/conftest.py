"""Helpers for the pickers, completion, approval and export tests: tiny host apps."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widget import Widget

from picode.tui.themes import DEFAULT_THEME, default_tokens, load_themes

SIZE = (100, 30)


class FakeClock:
    """A monotonic clock that moves only when told."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


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


async def wait_until(
    pilot: Any, predicate: Callable[[], object], timeout: float = 5.0, what: str = ""
) -> None:
    """Pump the app until ``predicate()`` holds; fail after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await pilot.pause(0.01)


def run(coro: Any, timeout: float = 30.0) -> Any:
    async def guarded() -> Any:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(guarded())


def screen_text(app: App[Any]) -> str:
    """What the current screen shows, as plain text lines."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())
