"""Frames that move the transcript by scrolling the terminal instead of repainting it.

While a reply streams, the transcript follows the bottom: each line the reply adds moves
every line above it up by one. Textual repaints every widget that moved, so each such
frame rewrote the whole transcript (~8 kB of escape sequences, and the compositor's work
to cut and join every visible line) to show one new line; that was most of picode's CPU
while a reply streams (docs/benchmarks.md, "Long sessions").

A terminal moves a band of rows itself: a scrolling region (DECSTBM) and deleting lines at
its top (DL) shift the rows below up and leave blank ones at the bottom. After a layout,
``ScrollingCompositor`` checks whether everything in the scrolling widget (the transcript)
moved up by the same number of rows, and nothing else is drawn over it. Then the frame
starts with that scroll, and only what it cannot know is painted: the rows that came into
view, what changed (its repaints moved along), widgets that appeared, rows a widget grew
or shrank by, and the scrollbar. In any other case (a widget above the view changed
height, a popup over the transcript, a resize, a person's scroll) it repaints as Textual
does.

Textual internals used here (``Compositor._full_map``, ``_dirty_regions``, ``reflow``,
``render_update``, ``ChopsUpdate``) are those of Textual 8; tests/tui/app/test_terminal_scroll.py
checks that a terminal fed these frames shows what a full repaint shows.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from itertools import pairwise
from types import MappingProxyType
from typing import TYPE_CHECKING

from rich.console import Console, RenderableType
from textual._compositor import ChopsUpdate, Compositor, CompositorMap, ReflowResult
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

from picode.tui.widgets.steady import SteadyScrollBar

if TYPE_CHECKING:
    from textual.screen import Screen

#: A scroll of more rows than this share of the region is left to a full repaint: the
#: rows saved would be few.
MOST_OF_REGION = 0.75
_UNPAINTED: Mapping[int, Strip | None] = MappingProxyType({})


class ScrolledChopsUpdate(ChopsUpdate):
    """A partial update that scrolls rows of the terminal before painting."""

    def __init__(self, update: ChopsUpdate, scrolls: list[tuple[Region, int]]) -> None:
        super().__init__(update.chops, update.spans, update.chop_ends)
        self.scrolls = scrolls

    def render_segments(self, console: Console) -> str:
        return scroll_sequence(self.scrolls) + super().render_segments(console)


def scroll_sequence(scrolls: list[tuple[Region, int]]) -> str:
    """Move the rows of each region up by its count (region rows only; full width)."""
    parts: list[str] = []
    for region, lines in scrolls:
        top, bottom = region.y + 1, region.bottom  # 1-based, inclusive
        # Margins, cursor to the region's top, delete ``lines`` lines there (the rows
        # below move up within the margins), margins back to the whole screen.
        parts.append(f"\x1b[{top};{bottom}r\x1b[{top};1H\x1b[{lines}M\x1b[r")
    return "".join(parts)


class ScrollingCompositor(Compositor):
    """A compositor that scrolls the terminal for ``scroller`` when it can."""

    def __init__(self) -> None:
        super().__init__()
        self._start_scrolling()

    def _start_scrolling(self) -> None:
        #: The widget whose content moving up is done by the terminal (the transcript).
        self.scroller: Widget | None = None
        #: Scrolls the next partial update starts with, oldest first.
        self._scrolls: list[tuple[Region, int]] = []
        #: The full map does not describe what was painted last (a visible-only reflow
        #: came after it).
        self._map_stale = True
        #: The map of the last reflow, while it is the one painted.
        self._painted_map: CompositorMap | None = None
        #: Frames that scrolled the terminal (for tests and benches).
        self.scrolled_frames = 0

    def reflow(self, parent: Widget, size: Size) -> ReflowResult:
        old_map = self._full_map
        before = set(self._dirty_regions)
        # Only for the screen on top: another screen's frames are not written, and it is
        # painted whole when it comes back.
        current = getattr(parent, "is_current", False)
        # Textual rebuilds its map in between when asked for it (``full_map``): the map
        # then no longer tells where things were painted.
        painted = self._full_map is self._painted_map
        usable = current and painted and not self._map_stale and size == self.size
        result = super().reflow(parent, size)
        self._painted_map = self._full_map
        self._map_stale = not current
        if not current:
            self._scrolls.clear()
        elif usable and self.scroller is not None:
            self._scroll_instead(old_map, before, size)
        return result

    def reflow_visible(self, parent: Widget, size: Size) -> set[Widget]:
        self._map_stale = True
        return super().reflow_visible(parent, size)

    def render_update(
        self, full: bool = False, screen_stack: list[Screen] | None = None, simplify: bool = False
    ) -> RenderableType | None:
        if full or self.size.region in self._dirty_regions:
            self._scrolls.clear()  # everything is painted anyway
        return super().render_update(full=full, screen_stack=screen_stack, simplify=simplify)

    def render_partial_update(self) -> ChopsUpdate | None:
        # Textual's, but each widget draws only the rows and columns that are painted:
        # Textual's draws every visible line of each widget the update's bounding box
        # touches, and a scroll's frame touches the whole transcript (its scrollbar).
        regions = self._dirty_regions.copy()
        self._dirty_regions.clear()
        scrolls, self._scrolls = self._scrolls, []
        if not regions:
            return None
        spans = list(self._regions_to_spans(regions))
        update = ChopsUpdate(self._render_spans(spans), spans, [c[1:] for c in self.cuts])
        if not scrolls:
            return update
        self.scrolled_frames += 1
        return ScrolledChopsUpdate(update, scrolls)

    def _render_spans(self, spans: list[tuple[int, int, int]]) -> list[Mapping[int, Strip | None]]:
        """Chops (Textual's ``_render_chops``) filled only where ``spans`` are painted:
        chops outside them stay empty or hold what is behind, and are not written."""
        cuts = self.cuts
        painted: dict[int, list[tuple[int, int]]] = {}
        for y, x1, x2 in spans:
            painted.setdefault(y, []).append((x1, x2))
        # Rows no span paints are never read (``ChopsUpdate`` writes the spans' rows only).
        chops: list[Mapping[int, Strip | None]] = [_UNPAINTED] * len(cuts)
        lines: dict[int, dict[int, Strip | None]] = {}
        for y in painted:
            chops[y] = lines[y] = dict.fromkeys(cuts[y][:-1])
        rows_painted = sorted(painted)
        # Front to back, as Textual paints: the first strip in a chop wins.
        for widget, (region, clip) in self.visible_widgets.items():
            shown = region.intersection(clip)
            if not shown:
                continue
            left, right = shown.x, shown.right
            # Rows painted here, less those where widgets in front filled every chop
            # this one would: a container behind its children (the screen, the
            # transcript, a message) is drawn only where it shows. Only the painted rows
            # are looked at: a frame paints a few rows of a screen of widgets.
            first = bisect_left(rows_painted, shown.y)
            rows = [
                y
                for y in rows_painted[first : bisect_left(rows_painted, shown.bottom, first)]
                if _unfilled(lines[y], cuts[y], painted[y], left, right)
            ]
            for top, count in _runs(rows):
                strips = widget.render_lines(
                    Region(left - region.x, top - region.y, shown.width, count)
                )
                for y, strip in zip(range(top, top + count), strips, strict=False):
                    line = lines[y]
                    ends = [cut for cut in cuts[y] if right >= cut >= left]
                    for cut, piece in zip(
                        ends, strip.divide([c - left for c in ends[1:]]), strict=False
                    ):
                        if line.get(cut) is None:
                            line[cut] = piece
        return chops

    # --- deciding ----------------------------------------------------------------------

    def _scroll_instead(self, old_map: CompositorMap, before: set[Region], size: Size) -> None:
        """After a reflow: if the scroller's content only moved up, replace the repaint of
        its region by a terminal scroll and the few regions that still need painting."""
        scroller = self.scroller
        assert scroller is not None
        screen = size.region
        if screen in before:
            return
        new_map = self._full_map
        old, new = old_map.get(scroller), new_map.get(scroller)
        if old is None or new is None or old.region != new.region or old.clip != new.clip:
            return
        band = new.region.intersection(new.clip).intersection(screen)
        if not band or band.x != 0 or band.width != size.width:
            return  # the terminal scrolls whole rows
        chrome: set[Widget] = {
            bar
            for bar in (
                scroller._vertical_scrollbar,
                scroller._horizontal_scrollbar,
                scroller._scrollbar_corner,
            )
            if bar is not None
        }
        plan = _plan(scroller, chrome, band, old_map, new_map)
        if plan is None:
            return
        lines, paint = plan
        if lines <= 0 or lines > band.height * MOST_OF_REGION:
            return
        # Everything the reflow marked inside the band is replaced by the scroll and the
        # plan; marks outside it stay. Repaints asked for before the reflow were placed
        # where things were: inside the band they move up with the rows, except on the
        # scrollbar, which stays.
        bars = [new_map[bar].region for bar in chrome if bar in new_map]
        added = self._dirty_regions - before
        dirty = {region for region in added if not band.contains_region(region)}
        for region in before:
            if band.contains_region(region):
                if moved := region.translate((0, -lines)).intersection(band):
                    dirty.add(moved)
                dirty.update(on_bar for bar in bars if (on_bar := region.intersection(bar)))
            else:
                dirty.add(region)
        dirty.add(Region(band.x, band.bottom - lines, band.width, lines))
        dirty.update(inside for region in paint if (inside := region.intersection(band)))
        # Scrolls not yet painted: their marks moved with them, so this one comes after.
        self._dirty_regions = dirty
        self._scrolls.append((band, lines))


def scroll_with_terminal(widget: Widget) -> ScrollingCompositor:
    """Let ``widget``'s screen scroll the terminal for it (its compositor is replaced by
    one with the same state)."""
    screen = widget.screen
    compositor = screen._compositor
    if not isinstance(compositor, ScrollingCompositor):
        # The same arrangement, and what waits to be painted, carry over.
        replacement = ScrollingCompositor.__new__(ScrollingCompositor)
        replacement.__dict__.update(compositor.__dict__)
        replacement._start_scrolling()
        screen._compositor = compositor = replacement
    compositor.scroller = widget
    return compositor


def _plan(
    scroller: Widget,
    chrome: set[Widget],
    band: Region,
    old_map: CompositorMap,
    new_map: CompositorMap,
) -> tuple[int, list[Region]] | None:
    """(rows everything in ``band`` moved up by, regions to paint after scrolling them),
    or None when the band's change is not a scroll."""
    lines: int | None = None
    paint: list[Region] = []
    bars: list[tuple[Widget, Region]] = []
    for widget, geometry in new_map.items():
        if widget is scroller:
            continue
        shown = geometry.clip.intersection(geometry.region)
        if widget in chrome:
            bars.append((widget, shown))
            continue
        previous = old_map.get(widget)
        inside = band.contains_region(geometry.clip)
        if not inside:
            # Painted over the band from outside it (an overlay, another layer), unless it
            # is an ancestor the band lies in.
            was = previous.clip.intersection(previous.region) if previous else None
            over = shown.overlaps(band) or (was is not None and was.overlaps(band))
            if over and not _contains(widget, scroller):
                return None
            continue
        if previous is None:
            paint.append(shown)  # new in the band
            continue
        if not band.contains_region(previous.clip):
            return None
        old_region, region = previous.region, geometry.region
        if old_region.x != region.x or old_region.width != region.width:
            return None
        moved = old_region.y - region.y
        if lines is None:
            lines = moved
        elif moved != lines:
            return None  # not one shift: something above changed height
        if previous.order != geometry.order:
            paint.append(shown)
            continue
        # Where the widget was drawn, once scrolled, against where it is shown now: rows
        # it grew by or that came out from under its parent's edge were not drawn (by it),
        # and rows it left show something else now.
        was = previous.clip.intersection(previous.region).translate((0, -moved))
        paint.extend(_rows_apart(shown, was))
    for widget, previous in old_map.items():
        if widget in new_map or widget is scroller:
            continue
        was = previous.clip.intersection(previous.region)
        if not was.overlaps(band):
            continue
        if not band.contains_region(previous.clip):
            return None  # something over the band went away
        paint.append(was.translate((0, -(lines or 0))).intersection(band))
    if lines is None or lines <= 0:
        return None  # not moved, or moved down (scrolled up): repainted as Textual does
    for bar, shown in bars:
        paint.extend(_moved_cells(bar, shown, lines))
    return lines, paint


def _moved_cells(bar: Widget, shown: Region, lines: int) -> list[Region]:
    """Rows of a scrollbar that scrolling by ``lines`` changed: where its drawing differs
    from the drawing ``lines`` rows below. A whole-cell thumb on a track differs only at
    the thumb's ends; the thumb's own move, if any, is the bar's own repaint."""
    if not shown:
        return []
    thumb = bar.drawn_thumb if isinstance(bar, SteadyScrollBar) else None
    if thumb is not None and thumb[0] == shown.height:
        # The thumb it draws is known in whole cells: no need to draw the bar to compare.
        _, start, end = thumb
        rows = [
            y
            for y in range(shown.height - lines)
            if (start <= y < end) != (start <= y + lines < end)
        ]
    else:
        drawn = bar.render_lines(Region(0, 0, shown.width, shown.height))
        rows = [y for y in range(len(drawn) - lines) if list(drawn[y]) != list(drawn[y + lines])]
    return [Region(shown.x, shown.y + first, shown.width, count) for first, count in _runs(rows)]


def _rows_apart(shown: Region, was: Region) -> list[Region]:
    """The rows of the two regions (same columns) that are in one but not the other."""
    if not was or not shown or (was.x, was.width) != (shown.x, shown.width):
        return [region for region in (shown, was) if region]
    x, width = shown.x, shown.width
    top, bottom = sorted((shown.y, was.y)), sorted((shown.bottom, was.bottom))
    return [Region(x, start, width, end - start) for start, end in (top, bottom) if end > start]


def _unfilled(
    line: dict[int, Strip | None],
    cuts: list[int],
    spans: list[tuple[int, int]],
    left: int,
    right: int,
) -> bool:
    """A chop of ``line`` that both a painted span and the columns ``left``–``right``
    touch is still empty (chop ``i`` runs from ``cuts[i]`` to ``cuts[i + 1]``)."""
    for x1, x2 in spans:
        start, end = max(x1, left), min(x2, right)
        if start >= end:
            continue
        for cut, after in pairwise(cuts):
            if cut < end and after > start and line.get(cut) is None:
                return True
    return False


def _runs(rows: list[int]) -> list[tuple[int, int]]:
    """Consecutive numbers as (first, count)."""
    runs: list[tuple[int, int]] = []
    for y in rows:
        if runs and runs[-1][0] + runs[-1][1] == y:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((y, 1))
    return runs


def _contains(widget: Widget, node: Widget) -> bool:
    """``widget`` is ``node`` or one of its ancestors."""
    current: object = node
    while current is not None:
        if current is widget:
            return True
        current = getattr(current, "_parent", None)
    return False
