"""``/resume``: this folder's sessions (Tab: every folder's), newest first, filter as you type.
A subagent's session is not listed: it is opened from its ``task`` call's path.

Listing runs in a thread, and the picker waits up to ``INLINE_WAIT_S`` for it before its
first frame: a warm store answers well within that, so the rows appear in the very first
frame (the waiting thread holds no GIL, so the lister runs at full speed, which it does not
while Textual is busy drawing). A slow listing (the store scanning new files) is left to
finish in the background behind "Loading sessions…". Each scope is listed once per picker.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import ClassVar, Literal, Protocol

from textual.binding import Binding, BindingType
from textual.content import Content

from picode.ai.untrusted import one_line
from picode.session.store import SessionSummary
from picode.tui.pickers.base import DEFAULT_MAX_ROWS, PickerScreen
from picode.tui.widgets.footer import display_path

Scope = Literal["here", "all"]

_TIME_WIDTH = 13
_COUNT_WIDTH = 9
_SIZE_WIDTH = 7
_CWD_WIDTH = 28
_TITLE_CHARS = 200
#: How long opening the picker may wait for the listing before showing "Loading sessions…".
INLINE_WAIT_S = 0.1


class SessionLister(Protocol):
    def list(self, cwd: Path | None = None) -> list[SessionSummary]: ...


def relative_time(then_ms: int, now_s: float) -> str:
    seconds = max(0.0, now_s - then_ms / 1000)
    if seconds < 45:
        return "just now"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{max(1, minutes)} min ago"
    hours = round(seconds / 3600)
    if hours < 24:
        return "1 hour ago" if hours == 1 else f"{hours} hours ago"
    days = round(seconds / 86400)
    if days < 2:
        return "yesterday"
    if days < 30:
        return f"{days} days ago"
    months = round(days / 30.44)
    if months < 12:
        return "1 month ago" if months == 1 else f"{months} months ago"
    years = max(1, round(days / 365.25))
    return "1 year ago" if years == 1 else f"{years} years ago"


def format_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.0f} KB" if size >= 10 * 1024 else f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


class SessionPicker(PickerScreen[SessionSummary, SessionSummary]):
    """Dismisses with the chosen ``SessionSummary``, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab", "toggle_scope", "All folders", show=False),
    ]

    hint_text = "↑↓ move · enter resume · tab all folders · esc cancel · type to filter"
    placeholder = "Filter by name or first message…"
    empty_text = "Loading sessions…"

    def __init__(
        self,
        store: SessionLister,
        cwd: Path,
        *,
        current_id: str | None = None,
        scope: Scope = "here",
        now: Callable[[], float] = time.time,
        home: Path | None = None,
        max_rows: int = DEFAULT_MAX_ROWS,
    ) -> None:
        super().__init__(max_rows=max_rows)
        self.store = store
        self.cwd = cwd
        self.current_id = current_id
        self.scope: Scope = scope
        self._now = now
        self._home = home
        self._listed: dict[Scope, list[SessionSummary]] = {}
        self._errors: dict[Scope, str] = {}
        self._loading: set[Scope] = set()
        self._haystacks: dict[tuple[Scope, str], str] = {}
        self._cwd_labels: dict[Path, str] = {}
        self._cwd_width = 0
        self._now_s = now()

    # --- loading -----------------------------------------------------------------------

    def before_first_filter(self) -> None:
        self._ensure_listed(self.scope)

    @property
    def sessions(self) -> list[SessionSummary]:
        """Everything listed for the current scope (unfiltered)."""
        return self._listed.get(self.scope, [])

    @property
    def is_loading(self) -> bool:
        return self.scope in self._loading

    def _ensure_listed(self, scope: Scope) -> None:
        if scope in self._listed or scope in self._loading or scope in self._errors:
            return
        pending: Future[list[SessionSummary]] = Future()
        cwd = self.cwd if scope == "here" else None

        def list_sessions() -> None:
            try:
                pending.set_result(self.store.list(cwd))
            except BaseException as exc:
                pending.set_exception(exc)

        threading.Thread(target=list_sessions, name="picode-session-list", daemon=True).start()
        try:
            found = pending.result(timeout=INLINE_WAIT_S)
        except FutureTimeout:
            self._loading.add(scope)
            self.run_worker(self._finish_listing(scope, pending), exit_on_error=False)
        except Exception as exc:
            self._errors[scope] = _describe(exc)
        else:
            self._keep(scope, found)

    def _keep(self, scope: Scope, found: list[SessionSummary]) -> None:
        # A subagent's session is a transcript of one ``task`` call: listed, they would
        # soon outnumber the conversations.
        found = [summary for summary in found if summary.subagent_of is None]
        self._listed[scope] = found
        if scope == "all":
            labels = {self._cwd_label(s.cwd) for s in found}
            self._cwd_width = min(max(map(len, labels), default=0), _CWD_WIDTH)

    async def _finish_listing(self, scope: Scope, pending: Future[list[SessionSummary]]) -> None:
        try:
            found = await asyncio.wrap_future(pending)
        except Exception as exc:
            self._failed(scope, _describe(exc))
            return
        self._listed_now(scope, found)

    def _listed_now(self, scope: Scope, found: list[SessionSummary]) -> None:
        self._loading.discard(scope)
        self._keep(scope, found)
        if scope == self.scope:
            self._show_scope()

    def _failed(self, scope: Scope, error: str) -> None:
        self._loading.discard(scope)
        self._errors[scope] = error
        if scope == self.scope:
            self._show_scope()

    def _show_scope(self) -> None:
        self._now_s = self._now()
        self.refilter(initial=True)

    def refilter(self, *, initial: bool = False) -> None:
        self.pick_list.empty_text = self._empty_text()
        super().refilter(initial=initial)
        self._update_title()

    def _empty_text(self) -> str:
        error = self._errors.get(self.scope)
        if error is not None:
            return f"Could not list sessions: {error}"
        if self.is_loading:
            return "Loading sessions…"
        if self.query_text.strip():
            return "No session matches"
        if self.scope == "here":
            return "No sessions in this folder yet (tab: all folders)"
        return "No sessions yet"

    def _update_title(self) -> None:
        where = "this folder" if self.scope == "here" else "all folders"
        other = "all folders" if self.scope == "here" else "this folder"
        total = len(self.sessions)
        if self.is_loading:
            count = ""
        elif self.query_text.strip():
            count = f" · {len(self.matches)} of {total}"
        else:
            count = f" · {total}"
        self.set_title(f"Resume a session — {where}{count}")
        self.set_hint(f"↑↓ move · enter resume · tab {other} · esc cancel · type to filter")

    def action_toggle_scope(self) -> None:
        self.scope = "all" if self.scope == "here" else "here"
        self._ensure_listed(self.scope)
        self._show_scope()

    # --- filtering and rows --------------------------------------------------------------

    def filter_items(self, query: str) -> Sequence[SessionSummary]:
        sessions = self.sessions
        words = query.lower().split()
        if not words:
            return sessions
        return [s for s in sessions if all(w in self._haystack(s) for w in words)]

    def _haystack(self, summary: SessionSummary) -> str:
        key = (self.scope, summary.id)
        found = self._haystacks.get(key)
        if found is None:
            parts = [summary.name or "", summary.first_message or ""]
            if self.scope == "all":
                parts.append(str(summary.cwd))
            found = self._haystacks[key] = " ".join(parts).lower()
        return found

    def render_item(self, item: SessionSummary, highlighted: bool) -> Content:
        count = f"{item.message_count} msg" + ("s" if item.message_count != 1 else "")
        mark = ("● ", "$success") if item.id == self.current_id else "  "
        parts: list[tuple[str, str] | str | Content] = [
            mark,
            (relative_time(item.modified, self._now_s).rjust(_TIME_WIDTH), "$text-muted"),
            "  ",
            count.rjust(_COUNT_WIDTH),
            "  ",
            (format_size(item.size_bytes).rjust(_SIZE_WIDTH), "$text-muted"),
            "  ",
        ]
        if self.scope == "all":
            parts += [(_fit_left(self._cwd_label(item.cwd), self._cwd_width), "$accent"), "  "]
        parts.append(_title(item))
        return Content.assemble(*parts)

    def _cwd_label(self, cwd: Path) -> str:
        label = self._cwd_labels.get(cwd)
        if label is None:
            label = one_line(display_path(cwd, self._home)) if str(cwd) else "(unknown folder)"
            self._cwd_labels[cwd] = label
        return label

    def result_for(self, item: SessionSummary) -> SessionSummary:
        return item


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _title(item: SessionSummary) -> Content:
    # Names and first messages come from session files: spelled out, never raw.
    first = one_line(" ".join((item.first_message or "").split()), _TITLE_CHARS)
    if item.name:
        name = one_line(item.name)
        if first:
            return Content.assemble((name, "bold"), ("  " + first, "$text-muted"))
        return Content.styled(name, "bold")
    if first:
        return Content(first)
    return Content.styled("(no messages)", "$text-muted italic")


def _fit_left(text: str, width: int) -> str:
    """Cut from the left: the end of a path says most."""
    if len(text) > width > 1:
        return "…" + text[-(width - 1) :]
    return text.ljust(width)
