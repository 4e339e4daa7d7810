"""Search in the transcript: the terminal's own search, which the alternate screen took away.

What is searched is what the transcript draws, line by line as it is wrapped on screen
(case-insensitive), so a match is always something the person can see once scrolled to.
Every match is highlighted and the current one stands out; ``enter`` / ``up`` go to the
match above, ``down`` to the one below, and Esc closes the search where it is.

Highlighting is a Textual line filter given to the transcript's widgets while the search
is open (``Widget.get_line_filters``): filters run after a widget's styled lines are
cached, so a new query repaints without restyling, and nothing outside the transcript
(the editor, the footer, the search field itself) is marked.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.errors import NoWidget
from textual.filter import LineFilter
from textual.geometry import Region
from textual.widget import Widget

if TYPE_CHECKING:
    from textual.widget import AwaitMount

    from picode.tui.widgets.search_bar import SearchBar
    from picode.tui.widgets.transcript import Transcript

#: Lines searched at most (a long session keeps 150 entries; each may be long).
MAX_MATCHES = 5_000


@dataclass(frozen=True, slots=True)
class Match:
    widget: Widget
    line: int
    """The line within the widget."""
    y: int
    """The line within the transcript's whole (virtual) height."""
    start: int
    end: int
    text: str
    """The whole line as drawn (the current match is found again by it)."""


class MatchHighlight(LineFilter):
    """Marks every occurrence of ``pattern`` in a line; the occurrence at ``current``
    (a line's text and where it starts) gets ``current_style``."""

    def __init__(
        self,
        pattern: re.Pattern[str],
        style: Style,
        current_style: Style,
        current: tuple[str, int] | None = None,
    ) -> None:
        super().__init__()
        self.pattern = pattern
        self.style = style
        self.current_style = current_style
        self.current = current

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        text = "".join(segment.text for segment in segments if not segment.control)
        spans = [(m.start(), m.end()) for m in self.pattern.finditer(text) if m.end() > m.start()]
        if not spans:
            return segments
        styles = [
            self.current_style if self.current == (text, start) else self.style
            for start, _ in spans
        ]
        return _restyle(segments, spans, styles)


def _restyle(
    segments: Sequence[Segment], spans: Sequence[tuple[int, int]], styles: Sequence[Style]
) -> list[Segment]:
    """``segments`` with the characters inside each span restyled (spans sorted, apart)."""
    out: list[Segment] = []
    offset = 0
    index = 0
    for segment in segments:
        text, style, control = segment
        if control or not text:
            out.append(segment)
            continue
        end = offset + len(text)
        cut = 0
        while index < len(spans) and spans[index][0] < end:
            start, stop = spans[index]
            first, last = max(start, offset) - offset, min(stop, end) - offset
            if first > cut:
                out.append(Segment(text[cut:first], style))
            out.append(Segment(text[first:last], (style or Style()) + styles[index]))
            cut = last
            if stop <= end:
                index += 1
            else:
                break
        if cut < len(text):
            out.append(Segment(text[cut:], style))
        offset = end
    return out


class Focusable(Protocol):
    def focus(self) -> object: ...


class Hushable(Protocol):
    def hush(self) -> None: ...


class SearchHost(Protocol):
    """Where the field goes (above the queue), and what has the keys when it closes."""

    @property
    def transcript(self) -> Transcript: ...

    @property
    def queue(self) -> Widget: ...

    @property
    def editor(self) -> Focusable: ...

    @property
    def output_below(self) -> Hushable:
        """Told before folded entries are shown: the transcript grows without new output."""
        ...

    def mount(self, *widgets: Widget, before: int | str | Widget | None = None) -> AwaitMount: ...


class TranscriptSearch:
    def __init__(self, host: SearchHost) -> None:
        self._host = host
        self.transcript = host.transcript
        #: The field, built on the first search (its Input is not needed in the first frame).
        self.bar: SearchBar | None = None
        self.query = ""
        self.matches: list[Match] = []
        self.current: int | None = None
        self._filter: MatchHighlight | None = None
        self._current_filter: MatchHighlight | None = None
        self._patched: weakref.WeakSet[Widget] = weakref.WeakSet()

    def is_open(self) -> bool:
        return self.bar is not None and bool(self.bar.display)

    def has_focus(self) -> bool:
        return self.is_open() and self.bar is not None and self.bar.input.has_focus

    def open(self) -> None:
        """Show the field (again: with the last query selected, to type over or step on)."""
        if self.transcript.folded:
            self._host.output_below.hush()
            self.transcript.unfold_all()
        if self.bar is None:
            from picode.tui.widgets.search_bar import SearchBar

            self.bar = SearchBar(on_query=self.set_query, on_step=self.step)
            self._host.mount(self.bar, before=self._host.queue)
            # Composed in the next frame: only then can its field take the focus.
            self.bar.call_after_refresh(self._show)
        else:
            self._show()

    def _show(self) -> None:
        bar = self.bar
        if bar is None:
            return
        bar.display = True
        bar.input.focus()
        bar.input.select_all()
        bar.show_count(self.current, len(self.matches), self.query)
        if self.query.strip():
            self.step(0)  # the marks again, on what is on screen now

    def close(self) -> bool:
        """Esc: the field and the marks go; the view stays where the search left it."""
        if self.bar is None or not self.is_open():
            return False
        self.bar.display = False
        self._filter = self._current_filter = None
        for widget in list(self._patched):
            # The instance attribute shadowed the class's method: removing it restores it.
            vars(widget).pop("get_line_filters", None)
            widget.refresh()
        self._patched = weakref.WeakSet()
        self._host.editor.focus()
        return True

    def set_query(self, query: str) -> None:
        self.query = query
        self.current = None
        # After the unfolded entries are laid out: matches are read from what is drawn.
        self.transcript.call_after_refresh(self._search, 0)

    def step(self, direction: int) -> None:
        self.transcript.call_after_refresh(self._search, direction)

    # --- the search ------------------------------------------------------------------------

    def _search(self, direction: int) -> None:
        if not self.is_open():
            return
        before = self.matches[self.current] if self.current is not None else None
        self.matches = self._find() if self.query.strip() else []
        if not self.matches:
            self.current = None
        elif before is None:
            self.current = self._nearest_above_view_bottom()
        else:
            self.current = self._step_from(before, direction)
        self._highlight()
        if self.bar is not None:
            self.bar.show_count(self.current, len(self.matches), self.query)
        if self.current is not None:
            self._scroll_to(self.matches[self.current])

    def _find(self) -> list[Match]:
        pattern = _pattern(self.query)
        transcript = self.transcript
        screen = transcript.screen
        top = transcript.content_region.y - round(transcript.scroll_y)
        found: list[Match] = []
        for widget in transcript.walk_children(Widget):
            try:
                region = screen.find_widget(widget).region
            except NoWidget:
                continue  # not displayed
            if not region.width or not region.height:
                continue
            for line, strip in enumerate(widget.render_lines(Region(0, 0, *region.size))):
                text = strip.text
                for m in pattern.finditer(text):
                    if m.end() > m.start():
                        y = region.y + line - top
                        found.append(Match(widget, line, y, m.start(), m.end(), text))
                if len(found) >= MAX_MATCHES:
                    break
        found.sort(key=lambda m: (m.y, m.start))
        return found

    def _nearest_above_view_bottom(self) -> int:
        """The first match to show: the last one above the bottom of the view, as a
        terminal's search starts from where one is reading, going up."""
        transcript = self.transcript
        bottom = round(transcript.scroll_y) + transcript.scrollable_content_region.height
        above = [i for i, m in enumerate(self.matches) if m.y < bottom]
        return above[-1] if above else len(self.matches) - 1

    def _step_from(self, before: Match, direction: int) -> int:
        """The match ``direction`` steps from ``before`` (found again by its place)."""
        key = (before.y, before.start)
        keys = [(m.y, m.start) for m in self.matches]
        if direction < 0:
            earlier = [i for i, k in enumerate(keys) if k < key]
            return earlier[-1] if earlier else len(keys) - 1  # wraps to the newest
        if direction > 0:
            later = [i for i, k in enumerate(keys) if k > key]
            return later[0] if later else 0  # wraps to the oldest
        same = [i for i, k in enumerate(keys) if k >= key]
        return same[0] if same else len(keys) - 1

    def _highlight(self) -> None:
        pattern = _pattern(self.query)
        variables = self.transcript.app.theme_variables
        style = Style(reverse=True)
        current_style = Style(
            bold=True,
            underline=True,
            color=variables.get("background", "#000000"),
            bgcolor=variables.get("warning", "#ffa62b"),
        )
        current = self.matches[self.current] if self.current is not None else None
        self._filter = MatchHighlight(pattern, style, current_style)
        self._current_filter = MatchHighlight(
            pattern,
            style,
            current_style,
            (current.text, current.start) if current is not None else None,
        )
        for widget in self.transcript.walk_children(Widget):
            if widget not in self._patched:
                widget.get_line_filters = self._filters_for(widget)  # type: ignore[method-assign]
                self._patched.add(widget)
            widget.refresh()

    def _filters_for(self, widget: Widget) -> Callable[[], Sequence[LineFilter]]:
        ref = weakref.ref(widget)
        app_filters = widget.app.get_line_filters

        def filters() -> Sequence[LineFilter]:
            current = self.matches[self.current] if self.current is not None else None
            chosen = (
                self._current_filter
                if current is not None and current.widget is ref()
                else self._filter
            )
            # Before the app's own (NO_COLOR strips the colours, keeping bold and reverse).
            return [chosen, *app_filters()] if chosen is not None else app_filters()

        return filters

    def _scroll_to(self, match: Match) -> None:
        transcript = self.transcript
        height = transcript.scrollable_content_region.height
        if round(transcript.scroll_y) <= match.y < round(transcript.scroll_y) + height:
            return  # in view: the view does not jump
        transcript.scroll_to(y=max(0, match.y - height // 2), animate=False, immediate=True)


def _pattern(query: str) -> re.Pattern[str]:
    return re.compile(re.escape(query), re.IGNORECASE)
