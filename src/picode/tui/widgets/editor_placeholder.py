"""What stands where the prompt editor goes until the first frame is on screen.

The editor is a ``TextArea``, whose modules alone cost about 3 % of the first frame's
budget to import. This draws the same box and placeholder line, and keeps whatever is
typed or pasted before the editor takes its place, for the editor, in order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.cells import cell_len
from textual import events
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

if TYPE_CHECKING:
    from textual.dom import DOMNode


class EditorPlaceholder(Static, can_focus=True):
    DEFAULT_CSS = """
    EditorPlaceholder {
        height: 3;
        border: round $primary;
        padding: 0 1;
        background: $background;
        color: $text 40%;
    }
    """

    def __init__(self, placeholder: str) -> None:
        self._placeholder = placeholder
        super().__init__(self._line(placeholder), id="editor-placeholder")
        #: Keys, pastes and app actions waiting on them that arrived before the editor,
        #: oldest first.
        self.pending: list[events.Key | events.Paste | Callable[[], object]] = []
        self._editor: Widget | None = None

    @staticmethod
    def _line(placeholder: str) -> Content:
        # The reverse first cell stands for the editor's cursor.
        return Content.assemble((placeholder[:1], "$background on $foreground"), placeholder[1:])

    def on_resize(self) -> None:
        self.update(self._line(fit_placeholder(self._placeholder, self.content_size.width)))

    def on_key(self, event: events.Key) -> None:
        event.stop()
        event.prevent_default()
        self._keep(events.Key(event.key, event.character))

    def on_paste(self, event: events.Paste) -> None:
        event.stop()
        self._keep(events.Paste(event.text))

    @property
    def handed_over(self) -> bool:
        """The editor has the kept keys: what comes now goes straight to it."""
        return self._editor is not None

    def after_pending(self, callback: Callable[[], object]) -> None:
        """Run ``callback`` once the editor has taken every key kept so far."""
        self._keep(callback)

    def _keep(self, event: events.Key | events.Paste | Callable[[], object]) -> None:
        if self._editor is not None:
            # Routed here by the app before the focus moved: pass it on.
            _pass_on(self._editor, event)
        else:
            self.pending.append(event)

    async def hand_over(self, editor: Widget) -> None:
        """Put ``editor`` in this place, with the focus if this had it, and what was typed."""
        await self.app.mount(editor, before=self)
        # Behind the keys the app has already routed here, so they are kept first.
        self.call_later(self._finish, editor)

    def _finish(self, editor: Widget) -> None:
        app = self.app
        self._editor = editor
        if self.has_focus or app.focused is None:
            app.set_focus(editor)
        # They passed the app's bindings already: straight into the editor's queue.
        for event in self.pending:
            _pass_on(editor, event)
        self.pending.clear()
        # Last, after anything still routed here in the meantime has been passed on.
        self.call_later(self.remove)


def _pass_on(editor: Widget, event: events.Key | events.Paste | Callable[[], object]) -> None:
    if isinstance(event, events.Event):
        editor.post_message(event)
    else:
        editor.call_later(event)


def fit_placeholder(text: str, width: int) -> str:
    """``text`` ("Ask…  (a, b, c)") with hints dropped from the end until it fits in
    ``width`` cells; just its head when no hint fits: never a hint cut in the middle."""
    if cell_len(text) <= width or not text.endswith(")") or "  (" not in text:
        return text
    head, _, hints = text[:-1].partition("  (")
    kept = hints.split(", ")
    while kept:
        kept.pop()
        shorter = f"{head}  ({', '.join(kept)})"
        if kept and cell_len(shorter) <= width:
            return shorter
    return head


def after_typed_keys(root: DOMNode, editor: Widget, callback: Callable[[], object]) -> None:
    """Run ``callback`` once ``editor`` has taken the keys read before this one.

    Keys read together ("abc" + ctrl+d) reach the editor one message at a time, while a
    priority binding runs at once: acting on the editor's content then would see it
    without the keys typed just before. Before the editor is up they wait in the
    placeholder: the callback goes behind them there."""
    keepers = [p for p in root.query(EditorPlaceholder) if not p.handed_over]
    if keepers:
        keepers[0].call_later(keepers[0].after_pending, callback)
    elif not editor.call_later(callback):
        callback()
