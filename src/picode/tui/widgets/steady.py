"""Small adaptations of Textual for a transcript that grows at the bottom every frame.

Textual repaints a widget whole when its size or virtual size changes: its styled lines
(background, padding, filters) are dropped and drawn again. While a reply streams, the
reply, its message and the transcript all change height nearly every frame, so each frame
restyled every visible line of all three, plus the transcript's scrollbar, and a key typed
meanwhile waited for that (docs/benchmarks.md, "Latency through a real terminal").

- ``KeepsDrawnLines``: a widget that only grew taller (same width) keeps the lines it had
  drawn; only the new rows and those its bottom padding, border or outline covered are
  styled again. A scroll container keeps its lines when only its virtual size changes.
  For widgets whose line ``y`` does not depend on their height (no vertical centring): the
  transcript, a message and a Markdown view.
- ``forget_drawn_lines``: a widget folded out of view drops the lines Textual keeps for it,
  styled and rendered (``redraw`` has them drawn again if it is shown again).
- ``SteadyScrollBar``: draws its thumb in whole cells and repaints only when that drawing
  changes, not on every change of the scroll numbers behind it.

They touch Textual internals (``Widget._styles_cache``, ``Widget._render_cache``,
``Widget._vertical_scrollbar``), kept to this module; tests/tui/widgets/test_steady.py
checks that what they keep is what a full repaint draws.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from math import ceil
from typing import ClassVar, Self

from textual.geometry import NULL_SIZE, Region, Size
from textual.reactive import Reactive
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.visual import Visual
from textual.widget import Widget, _RenderCache

_NO_EDGE = ("", "none", "hidden")


class KeepsDrawnLines(Widget):
    """Mixin: growing taller restyles only the rows that changed."""

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        old = self._size
        unchanged = (
            size == old
            and virtual_size == self.virtual_size
            and container_size == self._container_size
        )
        # Unchanged (every widget on screen is told its size at each layout): nothing to
        # keep or redraw.
        if unchanged or size.width != old.width or size.height < old.height or not old.height:
            return super()._size_updated(size, virtual_size, container_size, layout)
        cache = self._styles_cache
        drawn = dict(cache._cache)
        dirty = set(cache._dirty_lines)
        repaint = set(self._repaint_regions)
        old_virtual = self.virtual_size
        # Not ``layout``: Textual lays the screen out once more when a virtual size changes,
        # but this is called from the layout that measured it (a scrollbar shown or hidden
        # asks for its own). Its watchers are still told.
        changed = super()._size_updated(size, virtual_size, container_size, layout=False)
        if layout and old_virtual != virtual_size:
            Reactive._check_watchers(self, "virtual_size", old_virtual)
        # What the old bottom edge covered is content now (or moves down): draw it again.
        first_moved = max(0, old.height - _bottom_edge(self))
        cache._cache.update((y, strip) for y, strip in drawn.items() if y < first_moved)
        cache._dirty_lines = dirty | set(range(first_moved, size.height))
        # Nor is the rest painted on screen again (Textual asks for the whole widget): the
        # lines above did not change, and a frame that only scrolls them keeps them.
        repaint.add(Region(0, first_moved, size.width, size.height - first_moved))
        self._repaint_regions = repaint
        return changed

    def _render_content(self) -> None:
        # A container draws only its background, the same on every line; Textual draws
        # each line again whenever its size changes, and a message grows with its reply.
        if not self.is_container or type(self).render is not Widget.render:
            super()._render_content()
            return
        if str(self.styles.keyline[0]) != "none":  # typed without "none", which it has
            super()._render_content()
            return
        width, height = self.size
        line = Visual.to_strips(self, self._render(), width, min(height, 1), self.visual_style)
        self._render_cache = _RenderCache(self.size, line[:1] * height)
        self._dirty_regions.clear()


def forget_drawn_lines(widget: Widget) -> None:
    """Drop the lines Textual keeps for ``widget`` and everything in it (a widget folded
    out of view): the styled lines, and those rendered from each one's content (a
    container keeps a blank line per row of its height). ``redraw`` before showing it."""
    for node in widget.walk_children(with_self=True):
        if isinstance(node, Widget):
            node._styles_cache.clear()
            node._render_cache = _RenderCache(NULL_SIZE, [])


def redraw(widget: Widget) -> None:
    """Have ``widget`` and everything in it render their lines again at the next paint:
    Textual renders from content only what it was told is out of date."""
    for node in widget.walk_children(with_self=True):
        if isinstance(node, Widget):
            node.refresh()


def _bottom_edge(widget: Widget) -> int:
    """Rows at the bottom that depend on where the bottom is."""
    styles = widget.styles
    rows = styles.padding.bottom
    if styles.border_bottom[0] not in _NO_EDGE:
        rows += 1
    if styles.outline_bottom[0] not in _NO_EDGE:
        rows = max(rows, 1)
    return rows


class WholeCellScrollBarRender(ScrollBarRender):
    """A thumb of whole cells: Textual's eighth-of-a-cell ends change its drawing with
    nearly every line a reply adds; whole cells change once every few lines, or every
    few hundred in a long conversation."""

    VERTICAL_BARS: ClassVar[list[str]] = [" "] * len(ScrollBarRender.VERTICAL_BARS)


class SteadyScrollBar(ScrollBar):
    """A vertical scrollbar that repaints only when its thumb's drawing changes."""

    window_virtual_size: Reactive[int] = Reactive(100, repaint=False)
    window_size: Reactive[int] = Reactive(0, repaint=False)
    position: Reactive[float] = Reactive(0, repaint=False)
    renderer: ClassVar[type[ScrollBarRender]] = WholeCellScrollBarRender

    def __init__(self, *, thickness: int = 1) -> None:
        super().__init__(vertical=True, name="vertical", thickness=thickness)
        self._drawn: tuple[int, int, int] | None = None
        self._held = False

    @contextmanager
    def held(self) -> Iterator[None]:
        """Let the numbers change together (Textual's scroll update also repaints the bar
        unasked); the thumb is compared once, after."""
        self._held = True
        try:
            yield
        finally:
            self._held = False
            self._refresh_if_moved()

    def refresh(
        self,
        *regions: Region,
        repaint: bool = True,
        layout: bool = False,
        recompose: bool = False,
    ) -> Self:
        if self._held and not (regions or layout or recompose):
            return self
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def _watch_window_virtual_size(self) -> None:
        self._refresh_if_moved()

    def _watch_window_size(self) -> None:
        self._refresh_if_moved()

    def _watch_position(self) -> None:
        self._refresh_if_moved()

    def _refresh_if_moved(self) -> None:
        if self._held:
            return
        thumb = self.thumb()
        if thumb != self._drawn:
            self._drawn = thumb
            self.refresh()

    @property
    def drawn_thumb(self) -> tuple[int, int, int] | None:
        """The ``thumb`` it draws now (its last repaint was asked for with it), if known."""
        return self._drawn

    def thumb(self) -> tuple[int, int, int]:
        """(height, first cell, cell after the last) of the thumb it draws."""
        size = self.size.height
        window = self.window_size if self.window_size < self.window_virtual_size else 0
        return (
            size,
            *thumb_cells(size, ceil(self.window_virtual_size), ceil(window), self.position),
        )


def thumb_cells(size: int, virtual: int, window: int, position: float) -> tuple[int, int]:
    """The cells ``WholeCellScrollBarRender.render_bar`` paints as the thumb, [first, end)."""
    if not (window and size and virtual and size != virtual):
        return (0, 0)
    eighths = len(ScrollBarRender.VERTICAL_BARS)
    thumb_size = max(1, window / (virtual / size))
    offset = (size - thumb_size) * (position / (virtual - window))
    start = int(offset * eighths)
    end = start + ceil(thumb_size * eighths)
    return (max(0, start) // eighths, max(0, end) // eighths)


class SteadyScrollBars(Widget):
    """Mixin for a vertically scrolling container: its scrollbar is a ``SteadyScrollBar``."""

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        if self._vertical_scrollbar is None:
            bar = SteadyScrollBar(thickness=self.scrollbar_size_vertical)
            bar.display = False
            self._vertical_scrollbar = bar
            self.app._start_widget(self, bar)
        return self._vertical_scrollbar

    def _scroll_update(self, virtual_size: Size) -> None:
        bar = self._vertical_scrollbar
        if not isinstance(bar, SteadyScrollBar):
            super()._scroll_update(virtual_size)
            return
        with bar.held():
            super()._scroll_update(virtual_size)
