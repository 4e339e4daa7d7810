"""Assistant Markdown: one widget per text block however long the reply, drawn line by line.

``MarkdownView`` shows rows rendered by ``md_render`` and wraps them itself (``md_layout``).
Rows are kept in two parts: the settled blocks, laid out once per width and only appended
to, and the rows that may still change. ``StreamingMarkdown`` fills it while a reply
streams: on each flush (at most one per frame) only the source from the first unsettled
top-level block on is parsed again; every block the stream has moved past is settled.

Textual's own Markdown widget mounts a widget per block and nested widgets per list item;
for a long reply the mounting, the stylesheet and each layout grew with the reply until the
UI fell behind the stream (docs/benchmarks.md, "Streaming").
"""

from __future__ import annotations

import re
import time
from typing import Any

from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style

from picode.ai.untrusted import safe
from picode.tui.widgets.md_layout import (
    Line,
    Paint,
    layout_rows,
    line_strip,
    place_blocks,
    selected_text,
)
from picode.tui.widgets.md_render import (
    CODE_INLINE,
    CODE_INLINE_ANSI,
    Block,
    Row,
    make_parser,
    parse,
    render_block,
    render_markdown,
)
from picode.tui.widgets.pacing import FRAME_S, TICK_POINTS, Due, on_beat, point_at_or_after
from picode.tui.widgets.steady import KeepsDrawnLines

#: The shortest time between two flushes of a streaming reply: a step of the beat it
#: shares with the spinner (pacing.py).
FLUSH_INTERVAL = FRAME_S
#: Text that comes faster than this (characters a second, ~200 tokens) is flushed with the
#: spinner's ticks only, 10 times a second: each frame then still adds most of a line, and
#: the frames in between (a layout of the screen for each line the reply grows by) were a
#: fifth of picode's CPU for steps nobody reads (docs/benchmarks.md). A model's usual pace
#: (200-600 characters a second) keeps every point of the beat.
FAST_TEXT_PER_S = 800
#: Drawn lines kept for repainting: a few screens. Every line of a long reply kept drawn
#: would be hundreds of thousands of small objects for the garbage collector to walk.
STRIP_CACHE_LINES = 256
_NEWLINE = re.compile(r"\r\n?|\n")


class MarkdownView(KeepsDrawnLines):
    """Markdown source drawn as styled lines."""

    DEFAULT_CSS = """
    MarkdownView {
        width: 1fr;
        height: auto;
        margin: 0 0 1 0;
        color: $foreground;
    }
    /* Nothing to show yet (or only blank lines): no gap either. */
    MarkdownView.-empty {
        margin: 0;
    }
    """

    def __init__(
        self, markdown: str = "", *, name: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, classes=classes)
        self._source = safe(markdown)
        self._unrendered = bool(markdown)
        #: Settled rows, blank lines between blocks included; only ever appended to.
        self._rows: list[Row] = []
        self._last_settled: Block | None = None
        #: Rows after the settled ones, replaced as a whole.
        self._live_rows: list[Row] = []
        self._width = 0
        self._lines: list[Line] = []
        self._rows_laid_out = 0
        self._live_lines: list[Line] | None = None
        #: The live lines on screen until the next ``_changed`` (those that did not change
        #: are not drawn again).
        self._shown_live: list[Line] = []
        self._strips: LRUCache[int, Strip] = LRUCache(STRIP_CACHE_LINES)
        self._paint: Paint | None = None
        self.set_class(not markdown.strip(), "-empty")

    @property
    def source(self) -> str:
        """The Markdown shown so far."""
        return self._source

    @property
    def holds_rendering(self) -> bool:
        """Rendered rows, laid-out lines or drawn strips are kept (not only the source)."""
        return bool(self._rows or self._live_rows or self._lines or len(self._strips))

    def rows(self) -> list[Row]:
        """Every rendered row, settled and live (before wrapping)."""
        if self._unrendered:
            self._render_all()
        return [*self._rows, *self._live_rows]

    @property
    def lines(self) -> list[Line]:
        """Screen lines at the current width (laid out on demand)."""
        self._layout(self._width or max(1, self.size.width))
        return [*self._lines, *(self._live_lines or [])]

    # --- content --------------------------------------------------------------------------

    def _settle(self, blocks: list[Block]) -> None:
        rows, self._last_settled = place_blocks(blocks, self._last_settled)
        self._rows.extend(rows)

    def _set_live(self, blocks: list[Block]) -> None:
        self._live_rows, _ = place_blocks(blocks, self._last_settled)
        if self._live_lines is not None:
            self._shown_live = self._live_lines
        self._live_lines = None

    def _reset(self) -> None:
        self._rows.clear()
        self._last_settled = None
        self._live_rows = []
        self._lines = []
        self._rows_laid_out = 0
        self._live_lines = None
        self._shown_live = []
        self._strips.clear()

    def fold_away(self) -> None:
        """Out of view for good (folded above the screens kept): keep the source only. The
        rows, lines and drawn strips are many small objects per line, ~100 times the text
        they show; they are rendered again from the source if the entry is shown again."""
        if self._buffer_pending():
            return  # still streaming: the rows are what it is building on
        self._reset()
        self._paint = None
        self._unrendered = bool(self._source)

    def update(self, markdown: str) -> None:
        """Show ``markdown`` instead of what is shown: a whole text (a stream ``feed``s)."""
        source = safe(markdown)
        if source == self._source:
            return
        self._source = source
        self._reset()
        self._paint = None
        self._unrendered = bool(source)
        self.set_class(not source.strip(), "-empty")
        self.refresh(layout=True)

    def share_source(self, text: str) -> None:
        """``text`` is what this view shows (the finished message's own string): hold that
        one object instead of an equal copy."""
        if text is not self._source and text == self._source:
            self._source = text

    def _buffer_pending(self) -> bool:
        return False

    def _render_all(self) -> None:
        self._unrendered = False
        self._reset()
        self._settle(render_markdown(self._source))

    def _changed(self) -> None:
        """New rows: repaint, and lay the screen out again only if the height changed."""
        self.set_class(not (self._rows or self._live_rows), "-empty")
        if not self.is_mounted:
            return
        settled = len(self._lines)
        shown = self._live_lines if self._live_lines is not None else self._shown_live
        self._shown_live = []
        before = settled + len(shown)
        if self._width:
            self._layout(self._width)
        after = len(self._lines) + len(self._live_lines or [])
        if not self._width:
            self._strips.clear()
            self.refresh(layout=True)
            return
        # Settled lines never change, and while a block streams most of its lines stay as
        # they were: only those from the first that changed are drawn again. Textual keeps
        # its styled copy of the others, so a frame does not restyle the whole reply.
        first = settled + _same_lines(shown, [*self._lines[settled:], *(self._live_lines or [])])
        drawn = list(self._strips.keys())  # LRUCache is not iterable itself
        for y in drawn:
            if y >= first:
                self._strips.discard(y)
        if max(before, after) > first:
            changed = Region(0, first, max(1, self.size.width), max(before, after) - first)
            self.refresh(changed, layout=after != before)
        elif after != before:
            self.refresh(layout=True)

    # --- layout and drawing ---------------------------------------------------------------

    def _layout(self, width: int) -> None:
        if self._unrendered:
            self._render_all()
        if width != self._width:
            self._width = width
            self._lines = []
            self._rows_laid_out = 0
            self._live_lines = None
            self._strips.clear()
        if self._rows_laid_out < len(self._rows):
            self._lines.extend(layout_rows(self._rows[self._rows_laid_out :], width))
            self._rows_laid_out = len(self._rows)
        if self._live_lines is None:
            self._live_lines = layout_rows(self._live_rows, width)

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return container.width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if width <= 0:
            return 0
        self._layout(width)
        return len(self._lines) + len(self._live_lines or [])

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        self._layout(width)
        strip = self._strips.get(y)
        if strip is not None:
            return strip
        settled = len(self._lines)
        live = self._live_lines or []
        if y < settled:
            line = self._lines[y]
        elif y - settled < len(live):
            line = live[y - settled]
        else:
            return Strip.blank(width, self.visual_style.rich_style)
        selection = self.text_selection
        selected = selection.get_span(y) if selection is not None else None
        selection_style = None
        if selected is not None:
            selection_style = Style.from_styles(
                self.screen.get_component_styles("screen--selection")
            )
        if self._paint is None:
            self._paint = self._make_paint()
        strip = line_strip(line, y, width, self._paint, selected, selection_style)
        if selected is None:
            self._strips.set(y, strip)
        return strip

    def _make_paint(self) -> Paint:
        app = self.app
        if app.native_ansi_color:
            # Terminal colours have no shades: tints would paint text on its own colour.
            return Paint(self.visual_style, Style(), _parse_ansi_style)
        code = Style.parse("on black 10%" if app.current_theme.dark else "on white 30%")
        return Paint(self.visual_style, code, _parse_style)

    def notify_style_update(self) -> None:
        # A new theme (or stylesheet): the same rows, other colours.
        self._strips.clear()
        self._paint = None
        super().notify_style_update()

    def action_link(self, href: str) -> None:
        self.app.open_url(href)

    # --- selection ------------------------------------------------------------------------

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selected_text(self.lines, selection), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self._strips.clear()
        self.refresh()


class FlushMarkdown(Message, bubble=False):
    """Fragments are waiting; handled in the widget's own queue, so in order and also
    before the widget is mounted."""


class StreamingMarkdown(MarkdownView):
    """A reply that grows by fragments. ``feed`` only buffers (the event router must stay
    cheap); the buffer is parsed and drawn at most once per ``FLUSH_INTERVAL`` (twice that
    while the text comes faster than ``FAST_TEXT_PER_S``), and less often when parsing and
    painting the frame that shows it take longer than half of that:
    the event loop stays free at least as long as it was busy, so a key typed while a reply
    streams is echoed in the next frame instead of after a queue of reply frames."""

    def __init__(self, markdown: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._parser = make_parser()  # shared: it holds no state of this reply
        #: Link reference definitions seen so far, shared by every parse of the reply.
        self._env: dict[str, Any] = {}
        #: Where the first block that may still change begins.
        self._live_start = 0
        self._buffer: list[str] = []
        self._flush_posted = False
        #: A flush is waiting for the frame that shows it: the next one is timed from it.
        self._painting = False
        self._timer: Due | None = None
        #: The point of the beat (pacing.py) the next flush is due at, at the earliest.
        self._next_point = 0
        #: When the last flush took the buffer, and whether the text it took came faster
        #: than ``FAST_TEXT_PER_S``.
        self._flushed_at = 0.0
        self._fast = False
        self._finished = False
        self.text_length = 0
        if markdown:
            self.feed(markdown)

    @property
    def finished(self) -> bool:
        return self._finished

    def _buffer_pending(self) -> bool:
        return not self._finished

    def feed(self, fragment: str) -> None:
        if not fragment or self._finished:
            return
        self._buffer.append(fragment)
        self.text_length += len(fragment)
        # A flush already timed (or the frame it waits for) takes this fragment along: a
        # message per delta would only be dispatched to be dropped.
        if not (self._flush_posted or self._timer is not None or self._painting):
            self._flush_posted = True
            self.post_message(FlushMarkdown())

    def finish(self) -> None:
        """No more fragments: everything is settled now."""
        if self._finished:
            return
        self._finished = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._take_buffer()
        if not self._width and not (self._rows or self._live_rows):
            # A reply that came whole before its view was laid out: parsed by the layout
            # that first shows it, not here in the event router's call, where the parse
            # kept the mounting of its message (and so the frame that shows it) waiting.
            self._env = {}
            self._unrendered = bool(self._source)
            self.set_class(not self._source.strip(), "-empty")
            if self.is_mounted:
                self.refresh(layout=True)
            return
        if self._env.get("references"):
            # A link may use a definition that came after it: only a parse of the whole
            # reply resolves it.
            self._render_all()
        else:
            self._advance(final=True)
        self._env = {}  # the link definitions are in the rows now
        self._changed()

    def _on_flush_markdown(self, message: FlushMarkdown) -> None:
        self._flush_posted = False
        if self._finished or self._timer is not None or self._painting:
            return
        self._flush_when_due()

    def _flush_when_due(self) -> None:
        if not self._next_point:
            self.flush()  # the reply's first text: at once
            return
        # On the beat, also when the point is past (the frame came late): a flush off it
        # would be a frame of its own next to the spinner's.
        point = max(self._next_point, point_at_or_after(time.monotonic()))
        self._timer = on_beat(point, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        # The beat is the event loop's, not the widget's: it may have gone meanwhile.
        if not self._finished and self.is_attached:
            self.flush()

    def flush(self) -> None:
        """Show the buffered fragments now (otherwise done at most once per frame)."""
        if not self._buffer or self._finished:
            return
        started = time.monotonic()
        taken = sum(map(len, self._buffer))
        self._fast = taken >= FAST_TEXT_PER_S * (started - self._flushed_at)
        self._flushed_at = started
        self._take_buffer()
        self._advance(final=False)
        self._changed()
        self._painting = True
        self.call_after_refresh(self._painted, started)

    def _painted(self, started: float) -> None:
        self._painting = False
        spent = time.monotonic() - started
        # On the beat the spinner ticks on (pacing.py): the first point of it at least
        # half an interval away, so no more than one flush per point; fast text waits for
        # a point the spinner ticks on, so the two share every frame.
        interval = 2 * FLUSH_INTERVAL if self._fast else FLUSH_INTERVAL
        due = started + max(interval, 2 * spent) - FLUSH_INTERVAL / 2
        point = point_at_or_after(due)
        if self._fast:
            point += -point % TICK_POINTS
        self._next_point = point
        # Kept on the beat while the reply streams: fragments that come before the point
        # are flushed there, with the spinner's tick if one is due.
        if not self._finished and self._timer is None:
            self._flush_when_due()

    def _take_buffer(self) -> None:
        if self._buffer:
            # Untrusted: no escape sequence of the reply may reach the terminal.
            self._source += safe("".join(self._buffer))
            self._buffer.clear()

    def _advance(self, *, final: bool) -> None:
        """Parse from the first unsettled block; settle every block before the last one
        (all of them when ``final``) and show the last as live rows."""
        text = self._source[self._live_start :]
        nodes = parse(self._parser, text, self._env)
        keep = 0 if final else min(1, len(nodes))
        done = nodes[: len(nodes) - keep]
        if done:
            self._settle([render_block(node) for node in done])
        if keep:
            last = nodes[-1]
            self._live_start += _line_offset(text, last.map[0] if last.map else 0)
            self._set_live([render_block(last)])
        else:
            self._live_start = len(self._source)
            self._set_live([])


def _parse_style(style: str | Style) -> Style:
    # Theme tokens in the rows' styles resolve against the running app's theme (cached).
    return style if isinstance(style, Style) else Style.parse(style)


def _parse_ansi_style(style: str | Style) -> Style:
    return _parse_style(CODE_INLINE_ANSI if style == CODE_INLINE else style)


def _same_lines(old: list[Line], new: list[Line]) -> int:
    """How many lines at the start of ``new`` are drawn as in ``old`` (text and styles:
    Content's own equality compares the text only)."""
    count = 0
    for a, b in zip(old, new, strict=False):
        if not (
            a.body.plain == b.body.plain
            and a.body.spans == b.body.spans
            and a.prefix.plain == b.prefix.plain
            and a.prefix.spans == b.prefix.spans
            and (a.joiner, a.code, a.indent) == (b.joiner, b.code, b.indent)
        ):
            break
        count += 1
    return count


def _line_offset(text: str, line: int) -> int:
    """Where line ``line`` (0-based, counted as markdown-it does) starts in ``text``."""
    if line <= 0:
        return 0
    for count, match in enumerate(_NEWLINE.finditer(text), 1):
        if count == line:
            return match.end()
    return len(text)
