"""The scrolling conversation: bottom-anchored, with old entries folded away to stay smooth.

Every layout places each displayed widget, so a long conversation would make each frame
(and each echoed key) slower. While the view follows the bottom, entries more than a few
screens above it are *folded*: hidden, not laid out, still mounted, and holding only what
draws them again (a reply's source text; Textual keeps the height it measured), not the
rendered rows and styled lines, which were most of the memory a long conversation grew by.
Beyond ``max_entries`` the oldest are unmounted.

Entries built from session messages carry the message's index in the session's display
list, so the transcript always knows how many earlier messages are not on screen. A row at
the top says so; once it is scrolled into view the folded entries before it are shown again
a page at a time, and after them (with a ``loader`` set) unmounted messages are rebuilt.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import events
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static

from picode.tui.widgets.steady import (
    KeepsDrawnLines,
    SteadyScrollBars,
    forget_drawn_lines,
    redraw,
)

if TYPE_CHECKING:
    from picode.tui.widgets.messages import AssistantMessageView


DEFAULT_MAX_ENTRIES = 150
#: While following the bottom, entries are shown for this many screens above it.
DEFAULT_SHOWN_SCREENS = 3.0
#: Folded entries shown again per scroll to the top.
UNFOLD_PAGE = 20
#: While a loaded page is laid out, the view is held still every tick; the load ends once
#: the page has stopped moving for a few ticks (or after the timeout, whatever happens).
SETTLE_TICK_S = 0.02
SETTLE_STILL_TICKS = 3
SETTLE_TIMEOUT_S = 2.0

#: An entry and the display index of the message it shows (None: a notice, the welcome line).
IndexedEntry = tuple[Widget, int | None]


@dataclass(slots=True)
class _Settling:
    first: Widget | None
    """The oldest message before the load (None: nothing to hold still)."""
    start_y: int
    started: float
    last_y: int
    """Where ``first`` was at the last tick: the view moves by as much as it did."""
    still: int = 0


class EarlierRow(Static):
    """The first row: how many earlier messages are not shown (click to load them)."""

    DEFAULT_CSS = """
    EarlierRow {
        color: $muted;
        text-style: italic;
        margin: 0 0 1 0;
    }
    """

    def on_click(self, event: events.Click) -> None:
        event.stop()
        parent = self.parent
        if isinstance(parent, Transcript):
            parent.request_older()


class Transcript(VerticalScroll, KeepsDrawnLines, SteadyScrollBars, can_focus=False):
    """Keeps at most ``max_entries`` entries mounted; older ones are counted, not drawn."""

    DEFAULT_CSS = """
    Transcript {
        layout: stream;
        height: 1fr;
        padding: 0 1;
        scrollbar-size-vertical: 1;
        background: $background;
    }
    """

    def __init__(
        self,
        *,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        shown_screens: float | None = DEFAULT_SHOWN_SCREENS,
    ) -> None:
        super().__init__(id="transcript")
        self.max_entries = max(2, max_entries)
        #: None: never fold.
        self.shown_screens = shown_screens
        self.entries: deque[Widget] = deque()
        #: ``entries[:folded]`` are hidden.
        self.folded = 0
        #: Earlier messages (or, without message indices, entries) that are not mounted.
        self.older = 0
        self.thinking_collapsed = False
        self.tools_expanded = False
        #: Called (once at a time) to mount the page before the oldest entry.
        self.loader: Callable[[], None] | None = None
        self.loading_page = False
        self._indices: dict[Widget, int] = {}
        self._settling: _Settling | None = None
        self._settle_timer: Timer | None = None
        self._clock = time.monotonic
        self._earlier = EarlierRow("", id="hidden-count")
        self._earlier.display = False
        self._may_scroll_terminal = False
        self._scrolls_terminal = False

    @property
    def hidden(self) -> int:
        """Kept for readers of the older name: the earlier messages not mounted."""
        return self.older

    def compose(self) -> ComposeResult:
        yield self._earlier

    def on_mount(self) -> None:
        self.anchor()
        self.call_after_refresh(self._first_frame_shown)

    def _first_frame_shown(self) -> None:
        self._may_scroll_terminal = True

    def _scroll_terminal(self) -> None:
        """Following the bottom moves the rows on screen with the terminal's own scrolling
        instead of repainting them (tui/terminal_scroll.py). Set up with the first entry
        after the first frame: nothing on that frame's path waits for it."""
        if self._may_scroll_terminal and not self._scrolls_terminal:
            from picode.tui.terminal_scroll import scroll_with_terminal

            scroll_with_terminal(self)
            self._scrolls_terminal = True

    # --- adding ------------------------------------------------------------------------

    def add(self, widget: Widget, index: int | None = None) -> Widget:
        self._scroll_terminal()
        self.entries.append(widget)
        if index is not None:
            self._indices[widget] = index
        self.mount(widget)
        self._prune()
        self._fold_later()
        return widget

    def add_all(self, widgets: Iterable[Widget | IndexedEntry], hidden_before: int = 0) -> None:
        """Entries from history, oldest first; ``hidden_before`` messages come before them."""
        self._scroll_terminal()
        batch = [_pair(item) for item in widgets]
        self.older += hidden_before
        if len(batch) > self.max_entries:
            dropped = batch[: len(batch) - self.max_entries]
            batch = batch[-self.max_entries :]
            first = batch[0][1]
            self.older = first if first is not None else self.older + len(dropped)
        if batch:
            for widget, index in batch:
                self.entries.append(widget)
                if index is not None:
                    self._indices[widget] = index
            self.mount_all([widget for widget, _ in batch])
        self._prune()
        self._show_older()
        self._fold_later()

    def prepend(self, entries: Sequence[IndexedEntry], older: int) -> None:
        """Mount ``entries`` (oldest first) above the current ones, keeping the view still;
        ``older`` messages remain before them. Ends the load ``request_older`` started."""
        self.older = max(0, older)
        if not entries:
            self.loading_page = False
            self._show_older()
            return
        # A person reading scrolled-up text must not see it jump: the message that was
        # the oldest stays where it was on screen. At the bottom, the anchor does the work.
        keep_view = self._anchor_released or not self.is_anchored
        first = next((w for w in self.entries if w in self._indices), None)
        # Above the oldest message; the welcome line and notices before it stay on top.
        at = self.entries.index(first) if first is not None else 0
        widgets = [widget for widget, _ in entries]
        for offset, (widget, index) in enumerate(entries):
            self.entries.insert(at + offset, widget)
            if index is not None:
                self._indices[widget] = index
        if first is not None:
            self.mount_all(widgets, before=first)
        else:
            self.mount_all(widgets, after=self._earlier)
        self._show_older()
        self._hold_view(first if keep_view else None)

    def _hold_view(self, first: Widget | None) -> None:
        """Keep ``first`` still on screen while what was put above it is laid out."""
        start_y = first.virtual_region.y if first is not None else 0
        self._settling = _Settling(first, start_y, self._clock(), start_y)
        # The page is laid out over several frames (Markdown sizes itself late); until it
        # has settled the load is not over, or the next one would measure the view wrongly.
        if self._settle_timer is None:
            self._settle_timer = self.set_interval(SETTLE_TICK_S, self._settle)
        else:
            self._settle_timer.resume()

    def _settle(self) -> None:
        settling = self._settling
        if settling is None:
            self._stop_settling()
            return
        first = settling.first
        y = first.virtual_region.y if first is not None and first.is_attached else None
        if y is not None and y != settling.last_y:
            # By the distance moved, not to a fixed place: a person scrolling meanwhile
            # (a burst of PageUp) keeps what they scrolled.
            self.scroll_to(y=self.scroll_y + y - settling.last_y, animate=False, immediate=True)
            settling.last_y, settling.still = y, 0
        else:
            settling.still += 1
        moved = y is None or y != settling.start_y
        timed_out = self._clock() - settling.started > SETTLE_TIMEOUT_S
        if (moved and settling.still >= SETTLE_STILL_TICKS) or timed_out:
            self._stop_settling()
            self.loading_page = False
            self.call_after_refresh(self._maybe_load)

    def _stop_settling(self) -> None:
        self._settling = None
        if self._settle_timer is not None:
            self._settle_timer.pause()

    def remove_entry(self, widget: Widget) -> None:
        """Take one entry out (a line that no longer holds, e.g. a failed start's error)."""
        if widget in self.entries:
            if self.entries.index(widget) < self.folded:
                self.folded -= 1
            self.entries.remove(widget)
            self._indices.pop(widget, None)
            widget.remove()

    def clear(self) -> None:
        for widget in self.entries:
            widget.remove()
        self.entries.clear()
        self._indices.clear()
        self.older = 0
        self.folded = 0
        self.loading_page = False
        self._stop_settling()
        self._show_older()

    def index_of(self, widget: Widget) -> int | None:
        return self._indices.get(widget)

    # --- display toggles -----------------------------------------------------------------

    def set_thinking_collapsed(self, collapsed: bool) -> None:
        self.thinking_collapsed = collapsed
        for view in self._assistant_views():
            view.set_thinking_collapsed(collapsed)

    def set_tools_expanded(self, expanded: bool) -> None:
        from picode.tui.widgets.tool_call import ToolCallView

        self.tools_expanded = expanded
        for view in self._assistant_views():
            view.set_tools_expanded(expanded)
        for entry in self.entries:  # ``!cmd`` outputs stand on their own
            if isinstance(entry, ToolCallView):
                entry.expanded = expanded

    def _assistant_views(self) -> Iterable[AssistantMessageView]:
        # Imported here: the first frame must not wait for Markdown and the agent's types.
        from picode.tui.widgets.messages import AssistantMessageView

        return (w for w in self.entries if isinstance(w, AssistantMessageView))

    # --- pruning and the "earlier" row -------------------------------------------------

    def _prune(self) -> None:
        pruned: list[Widget] = []
        while len(self.entries) > self.max_entries:
            pruned.append(self.entries.popleft())
        self.folded = max(0, self.folded - len(pruned))
        if not pruned:
            return
        last_pruned = None
        for widget in pruned:
            index = self._indices.pop(widget, None)
            if index is not None:
                last_pruned = index
            widget.remove()
        first = self._first_index()
        if first is not None:
            self.older = first
        elif last_pruned is not None:
            self.older = last_pruned + 1
        else:
            self.older += len(pruned)
        self._show_older()

    def _first_index(self) -> int | None:
        for widget in self.entries:
            index = self._indices.get(widget)
            if index is not None:
                return index
        return None

    def _show_older(self) -> None:
        row = self._earlier
        earlier = self.earlier
        row.display = earlier > 0
        if earlier:
            noun = "message" if earlier == 1 else "messages"
            if self.folded or self.loader is not None:
                text = f"↑ {earlier:,} earlier {noun} — scroll up to load"
            else:
                text = f"{earlier:,} earlier {noun} hidden"
            row.update(Content(text))
            if self._can_load and self.is_mounted and not self.loading_page:
                self.call_after_refresh(self._maybe_load)

    @property
    def earlier(self) -> int:
        """Earlier messages not shown: unmounted or folded."""
        if not self.folded:
            return self.older
        shown = (self._indices.get(w) for w in list(self.entries)[self.folded :])
        first = next((index for index in shown if index is not None), None)
        return first if first is not None else self.older + self.folded

    @property
    def _can_load(self) -> bool:
        return self.folded > 0 or (self.loader is not None and self.older > 0)

    # --- folding -------------------------------------------------------------------------

    def _fold_later(self) -> None:
        if self.shown_screens is not None and self.is_mounted:
            self.call_after_refresh(self.fold)

    def fold(self) -> None:
        """Hide the entries more than ``shown_screens`` above the bottom, if the view is
        there: nothing a person is reading is hidden, and the view does not move."""
        if (
            self.shown_screens is None
            or not self.is_anchored
            or self._anchor_released
            or self.loading_page
        ):
            return
        keep = self.shown_screens * max(1, self.scrollable_content_region.height)
        entries = list(self.entries)
        height = 0
        first_shown = len(entries)
        while first_shown > self.folded and height < keep:
            first_shown -= 1
            height += entries[first_shown].outer_size.height
        if first_shown <= self.folded:
            return
        for widget in entries[self.folded : first_shown]:
            widget.display = False
            _fold_away(widget)
        self.folded = first_shown
        self._show_older()

    def _unfold(self) -> None:
        """Show the page of folded entries just above the shown ones, keeping the view."""
        start = max(0, self.folded - UNFOLD_PAGE)
        first = self.entries[self.folded] if self.folded < len(self.entries) else None
        for widget in list(self.entries)[start : self.folded]:
            _bring_back(widget)
        self.folded = start
        self.loading_page = True
        self._show_older()
        self._hold_view(first)

    @property
    def following(self) -> bool:
        """The view follows the bottom as output arrives (the person has not scrolled up)."""
        return self.is_anchored and not self._anchor_released

    @property
    def at_bottom(self) -> bool:
        return self.scroll_y >= self.max_scroll_y

    def unfold_all(self) -> None:
        """Show every folded entry (a search looks through all of them)."""
        if not self.folded:
            return
        for widget in list(self.entries)[: self.folded]:
            _bring_back(widget)
        self.folded = 0
        self._show_older()

    def scroll_pages(self, pages: int) -> None:
        """Scroll ``pages`` pages (negative: up) at once.

        Textual's ``scroll_page_up`` computes its target from the current offset but moves
        only after the next refresh, so ten keys read in one burst all aimed at the same
        page; moving now lets each key start where the previous one ended.
        """
        page = self.scrollable_content_region.height
        self.scroll_to(y=self.scroll_y + pages * page, animate=False, immediate=True)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value < old_value:
            self._maybe_load()

    def on_resize(self) -> None:
        self._maybe_load()

    def earlier_row_visible(self) -> bool:
        row = self._earlier
        return row.display and self.scroll_y <= row.outer_size.height

    def _maybe_load(self) -> None:
        if self.loading_page or not self._can_load:
            return
        # Folded entries are ready: they are shown a screen before the top is reached, so
        # scrolling up does not stop at it.
        near = self.scroll_y <= self.scrollable_content_region.height
        if self.earlier_row_visible() or (self.folded and near):
            self.request_older()

    def request_older(self) -> None:
        """Show the page before the oldest shown entry (no-op while one is loading)."""
        if self.loading_page:
            return
        if self.folded:
            self._unfold()
            return
        if self.loader is None or self.older <= 0:
            return
        self.loading_page = True
        # Not from inside a scroll or layout callback: widgets mounted there are laid out
        # only at the next unrelated refresh.
        self.app.call_later(self.loader)


def _fold_away(entry: Widget) -> None:
    """A folded entry keeps what draws it again (a reply's source text, a tool call and its
    result), not the drawing: in a long conversation that drawing was most of the memory
    each reply left behind."""
    # By name: importing the Markdown view here would put it on the first frame's path.
    for node in entry.walk_children(with_self=True):
        fold_away = getattr(node, "fold_away", None)
        if callable(fold_away):
            fold_away()
    forget_drawn_lines(entry)


def _bring_back(entry: Widget) -> None:
    """Show a folded entry again, drawn as before: a tool call's body from its result, the
    lines Textual dropped from each widget's content (a reply draws its own on demand)."""
    for node in entry.walk_children(with_self=True):
        bring_back = getattr(node, "bring_back", None)
        if callable(bring_back):
            bring_back()
    redraw(entry)
    entry.display = True


def _pair(item: Widget | IndexedEntry) -> IndexedEntry:
    return item if isinstance(item, tuple) else (item, None)
