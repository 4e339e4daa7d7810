"""A transcript growing at the bottom keeps the lines it drew (tui/widgets/steady.py): what
it keeps is exactly what a full repaint draws, and a frame restyles only what changed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from rich.segment import Segment
from textual.app import App, ComposeResult
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from picode.tui.themes import default_tokens
from picode.tui.widgets.markdown import StreamingMarkdown
from picode.tui.widgets.messages import AssistantMessageView
from picode.tui.widgets.steady import (
    KeepsDrawnLines,
    SteadyScrollBar,
    WholeCellScrollBarRender,
    thumb_cells,
)
from picode.tui.widgets.transcript import Transcript
from tests.tui.conftest import run

PARAGRAPH = "The quick brown fox jumps over the **lazy** dog, `twice`. " * 3


class Boxed(KeepsDrawnLines):
    """Lines inside a border and bottom padding: rows that move when it grows. Adding a
    line marks only that line for repainting, as a streaming reply does."""

    DEFAULT_CSS = "Boxed { border: round $accent; padding: 0 1 1 1; height: auto; }"

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def add_line(self, text: str) -> None:
        self.texts.append(text)
        self.refresh(Region(0, len(self.texts) - 1, self.size.width or 1, 1), layout=True)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.texts)

    def render_line(self, y: int) -> Strip:
        text = self.texts[y] if y < len(self.texts) else ""
        return Strip([Segment(text.ljust(self.size.width))])


class GrowingApp(App[None]):
    def get_theme_variable_defaults(self) -> dict[str, str]:
        return default_tokens(self.current_theme.dark)

    def compose(self) -> ComposeResult:
        yield Transcript()

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)


async def painted(widget: Widget) -> None:
    """Wait for the frame that shows the widget's latest change."""
    done = asyncio.Event()
    widget.call_after_refresh(done.set)
    await asyncio.wait_for(done.wait(), 5)


async def grow(markdown: StreamingMarkdown, text: str) -> None:
    """Stream ``text`` into the reply and wait for the frame that shows it."""
    markdown.feed(text)
    markdown.flush()
    await painted(markdown)


def drawn_by_cache(app: App[Any]) -> str:
    return app.export_screenshot()


def drawn_afresh(app: App[Any]) -> str:
    """The screen as a full repaint draws it: every widget's styled lines dropped."""
    for widget in app.screen.walk_children(Widget, with_self=True):
        widget._styles_cache.clear()
    return app.export_screenshot()


@contextmanager
def styled_lines(*widgets: Widget) -> Iterator[Callable[[Widget], int]]:
    """Count the lines each widget's styles cache draws."""
    counts = {id(widget): 0 for widget in widgets}
    originals = []
    for widget in widgets:
        cache = widget._styles_cache
        original = cache.render_line
        originals.append((cache, original))

        def counting(*args: Any, _key: int = id(widget), _draw: Any = original) -> Any:
            counts[_key] += 1
            return _draw(*args)

        cache.render_line = counting  # type: ignore[method-assign,assignment]
    try:
        yield lambda widget: counts[id(widget)]
    finally:
        for cache, original in originals:
            cache.render_line = original  # type: ignore[method-assign]


def test_a_growing_reply_looks_the_same_as_a_full_repaint() -> None:
    async def scenario() -> None:
        app = GrowingApp()
        async with app.run_test(size=(60, 16)) as pilot:
            message = AssistantMessageView()
            app.transcript.add(message)
            await pilot.pause()
            markdown = message.text_start(0)
            for step in range(12):  # past a screenful: the transcript scrolls too
                await grow(markdown, PARAGRAPH + ("\n\n" if step % 3 == 2 else " "))
                assert drawn_by_cache(app) == drawn_afresh(app), f"stale lines after {step}"

    run(scenario())


def test_a_bordered_widget_that_grows_redraws_its_old_bottom_edge() -> None:
    async def scenario() -> None:
        app = GrowingApp()
        async with app.run_test(size=(50, 20)) as pilot:
            box = Boxed()
            app.transcript.add(box)
            box.add_line("line 0")
            await pilot.pause()
            await painted(box)
            for lines in range(1, 5):
                box.add_line(f"line {lines}")
                await painted(box)
                assert drawn_by_cache(app) == drawn_afresh(app), f"stale edge at {lines}"

    run(scenario())


def test_growing_by_a_line_restyles_only_the_new_rows() -> None:
    async def scenario() -> None:
        app = GrowingApp()
        async with app.run_test(size=(60, 16)) as pilot:
            message = AssistantMessageView()
            app.transcript.add(message)
            markdown = message.text_start(0)
            markdown.feed(PARAGRAPH * 6 + "\n\n")  # taller than the screen
            markdown.flush()
            await pilot.pause()  # the message is mounted and laid out before the count
            await painted(markdown)
            height = message.size.height
            with styled_lines(app.transcript, message) as count:
                await grow(markdown, "A new paragraph.")
                assert message.size.height > height, "the reply must have grown"
                # The transcript did not change size: none of its lines are styled again;
                # the message restyles its new rows, not every visible one.
                assert count(app.transcript) == 0
                assert 0 < count(message) <= message.size.height - height

    run(scenario())


def test_a_layout_that_leaves_a_widget_as_it_was_redraws_none_of_it() -> None:
    """Every widget on screen is told its size at each layout: one whose size did not
    change keeps its lines, bottom edge included, and asks for no repaint."""

    async def scenario() -> None:
        app = GrowingApp()
        async with app.run_test(size=(50, 20)) as pilot:
            still, growing = Boxed(), Boxed()
            app.transcript.add(still)
            app.transcript.add(growing)
            still.add_line("stays as it is")
            growing.add_line("line 0")
            await pilot.pause()
            await painted(growing)
            with styled_lines(still) as count:
                for lines in range(1, 4):
                    growing.add_line(f"line {lines}")
                    await painted(growing)
                    assert not still._repaint_regions
                assert count(still) == 0
            assert drawn_by_cache(app) == drawn_afresh(app)

    run(scenario())


def test_the_transcript_scrollbar_repaints_only_when_its_thumb_moves() -> None:
    async def scenario() -> None:
        app = GrowingApp()
        async with app.run_test(size=(60, 16)) as pilot:
            for index in range(40):
                app.transcript.add(Static(f"entry {index}"))
            await pilot.pause()
            await painted(app.transcript)
            bar = app.transcript.vertical_scrollbar
            assert isinstance(bar, SteadyScrollBar)
            refreshes: list[int] = []
            original = bar.refresh

            def counting(*args: Any, **kwargs: Any) -> Any:
                refreshes.append(1)
                return original(*args, **kwargs)

            bar.refresh = counting  # type: ignore[method-assign]
            bar.position = 0
            bar.window_virtual_size = 1000
            refreshes.clear()
            thumb = bar.thumb()
            # A longer transcript, the same one-cell thumb at the top: nothing to draw.
            bar.window_virtual_size = 1001
            assert bar.thumb() == thumb and refreshes == []
            bar.position = 500
            assert bar.thumb() != thumb and refreshes, "a moved thumb must be drawn"

    run(scenario())


@pytest.mark.parametrize(
    ("size", "virtual", "window", "position"),
    [
        (31, 36, 31, 5),
        (31, 187, 31, 156),
        (31, 187, 31, 0),
        (31, 187, 31, 77.375),
        (20, 5000, 20, 4980),
        (10, 11, 10, 0.5),
    ],
)
def test_the_thumb_cells_are_the_ones_drawn(
    size: int, virtual: int, window: int, position: float
) -> None:
    bar = WholeCellScrollBarRender.render_bar(
        size=size, virtual_size=virtual, window_size=window, position=position
    )
    segments = bar.segments  # one per cell; the thumb's are drawn in reverse
    drawn = [index for index, cell in enumerate(segments) if cell.style and cell.style.reverse]
    first, end = thumb_cells(size, virtual, window, position)
    assert drawn == list(range(first, end))
    assert len(segments) == size


def test_a_reply_that_grows_lays_the_screen_out_once_and_still_tells_watchers() -> None:
    async def scenario() -> None:
        app = GrowingApp()
        async with app.run_test(size=(60, 16)) as pilot:
            message = AssistantMessageView()
            app.transcript.add(message)
            markdown = message.text_start(0)
            markdown.feed(PARAGRAPH * 6 + "\n\n")
            markdown.flush()
            await pilot.pause()
            await painted(markdown)
            await pilot.pause()
            heights: list[int] = []
            app.transcript.watch(
                app.transcript, "virtual_size", lambda size: heights.append(size.height)
            )
            compositor = app.screen._compositor
            layouts = 0
            original = compositor.reflow

            def counting(*args: Any) -> Any:
                nonlocal layouts
                layouts += 1
                return original(*args)

            compositor.reflow = counting  # type: ignore[method-assign]
            await grow(markdown, "A new paragraph.")
            await pilot.pause()
            await pilot.pause()
            # Textual lays out again when a virtual size changes; the layout that measured
            # it needs no second one.
            assert layouts == 1
            assert heights and heights[-1] == app.transcript.virtual_size.height
            assert drawn_by_cache(app) == drawn_afresh(app)

    run(scenario())
