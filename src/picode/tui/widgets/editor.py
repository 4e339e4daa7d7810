"""The prompt editor: multi-line, Enter sends, history on Up/Down at the edges.

The editor only says what the person asked for (``Submitted``); whether that becomes a
prompt, a steering message or a follow-up is the app's decision.

A large paste shows as one placeholder line and is put back in full when the message is
sent: re-wrapping a megabyte on every keystroke would freeze the editor.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from picode.tui.widgets.editor_placeholder import fit_placeholder
from picode.tui.widgets.pacing import TICK_POINTS, Due, on_beat, point_at_or_after

HISTORY_LIMIT = 500
LARGE_PASTE_CHARS = 4_000
LARGE_PASTE_LINES = 40
NEWLINE_KEYS = frozenset({"shift+enter", "ctrl+j", "newline"})
#: Seconds the cursor blinks after the last key or click; then it stays on. Each blink
#: redraws a line and writes to the terminal: an idle picode should do no work at all.
BLINK_FOR_S = 10.0


class PromptEditor(TextArea):
    DEFAULT_CSS = """
    PromptEditor {
        height: auto;
        min-height: 3;
        max-height: 12;
        border: round $primary 60%;
        padding: 0 1;
        background: $background;
    }
    PromptEditor:focus {
        border: round $primary;
    }
    PromptEditor .text-area--cursor-line {
        background: transparent;
    }
    """

    #: A toggle of the cursor waiting for its point of the beat.
    _blink_due: Due | None = None

    class Submitted(Message):
        def __init__(self, editor: PromptEditor, text: str, follow_up: bool) -> None:
            super().__init__()
            self.editor = editor
            self.text = text
            #: Alt+Enter: wait until the agent is done instead of steering it.
            self.follow_up = follow_up

    class PasteRequested(Message):
        """ctrl+v: the app looks for an image on the system clipboard first."""

    def __init__(self, *, placeholder: str = "") -> None:
        super().__init__(
            "",
            id="editor",
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            highlight_cursor_line=False,
            placeholder=placeholder,
        )
        self._full_placeholder = placeholder
        self.prompt_history: list[str] = []
        self._history_index: int | None = None
        self._recalled = ""
        self._draft = ""
        #: Placeholder → pasted text, for large pastes (kept so history recall works too).
        self.pastes: dict[str, str] = {}
        #: Sees every key first; True means it was handled (an open completion list).
        self.key_filter: Callable[[str], bool] | None = None
        self.clock: Callable[[], float] = time.monotonic
        self._active_at = self.clock()

    def on_resize(self) -> None:
        self.placeholder = fit_placeholder(self._full_placeholder, self.content_size.width)

    def _restart_blink(self) -> None:
        self._active_at = self.clock()
        self._drop_blink_due()  # shown now: a toggle already timed would hide it at once
        super()._restart_blink()

    def _pause_blink(self, visible: bool = True) -> None:
        self._drop_blink_due()
        super()._pause_blink(visible)

    def _toggle_cursor_blink_visible(self) -> None:
        if self.clock() - self._active_at >= BLINK_FOR_S:
            self._pause_blink(visible=True)  # the next key or click starts it again
            return
        # Drawn on the next tick of the beat the spinner and a streaming reply's flushes
        # share (pacing.py): in their frame, not in one of its own, two a second while a
        # reply streams. The blink timer keeps the rhythm; the toggle waits < 0.1 s.
        if self._blink_due is None:
            point = point_at_or_after(time.monotonic())
            self._blink_due = on_beat(point + -point % TICK_POINTS, self._toggle_on_beat)

    def _toggle_on_beat(self) -> None:
        self._blink_due = None
        if self.is_attached:
            super()._toggle_cursor_blink_visible()

    def _drop_blink_due(self) -> None:
        if self._blink_due is not None:
            self._blink_due.cancel()
            self._blink_due = None

    @property
    def is_empty(self) -> bool:
        return not self.text

    @property
    def is_recalling(self) -> bool:
        """Showing a history entry, untouched since it was recalled."""
        return self._history_index is not None and self.text == self._recalled

    def add_history(self, text: str) -> None:
        if text.strip() and (not self.prompt_history or self.prompt_history[-1] != text):
            self.prompt_history.append(text)
            del self.prompt_history[:-HISTORY_LIMIT]
        self._history_index = None

    def expanded_text(self, text: str | None = None) -> str:
        """The text with every paste placeholder still present replaced by what was pasted."""
        text = self.text if text is None else text
        for placeholder, pasted in self.pastes.items():
            if placeholder in text:
                text = text.replace(placeholder, pasted)
        return text

    def reset(self) -> None:
        # load_text, not clear(): clear() records the old text for undo, which is slow for
        # big texts and pointless here.
        self.load_text("")
        self._history_index = None

    def set_text(self, text: str) -> None:
        """Replace the content and put the cursor at its end."""
        self.load_text(text)
        self.move_cursor(self.document.end)

    def insert_before(self, texts: list[str]) -> None:
        """Put taken-back queued messages in front of whatever is being typed."""
        parts = [t for t in texts if t.strip()]
        if self.text.strip():
            parts.append(self.text)
        self.set_text("\n\n".join(parts))

    async def _on_key(self, event: events.Key) -> None:
        # Handlers run down the MRO unless the default is prevented: TextArea's own
        # ``_on_key`` runs after this one for every key not handled here.
        key = event.key
        if self.key_filter is not None and self.key_filter(key):
            self._consume(event)
        elif key in ("enter", "alt+enter"):
            self._consume(event)
            self._submit(follow_up=key == "alt+enter")
        elif key in NEWLINE_KEYS:
            self._consume(event)
            self.insert("\n")
        elif (
            key in ("up", "down") and self._at_edge(key) and self._recall(-1 if key == "up" else 1)
        ):
            self._consume(event)
        elif (action := self._own_action(key)) is not None:
            # Textual runs a widget's binding only once the key has bubbled up to the app,
            # one message hop per ancestor, while a key typed right after it (already in
            # this queue) is inserted at once: "left" then "b" arriving together made "acb".
            # Run here, the keys take effect in the order they were typed.
            self._consume(event)
            await self.run_action(action)

    def _own_action(self, key: str) -> str | None:
        """The action this widget binds ``key`` to (the app's own keys never get here:
        they are priority bindings, handled before the key reaches the focused widget)."""
        bindings = self._bindings.key_to_bindings.get(key)
        return bindings[0].action if bindings else None

    def _at_edge(self, key: str) -> bool:
        row = self.cursor_location[0]
        return row == 0 if key == "up" else row == self.document.line_count - 1

    async def _on_paste(self, event: events.Paste) -> None:
        # Terminals and tmux send line breaks in a paste as CR: the model must get LF.
        text = event.text = normalise_newlines(event.text)
        if _may_be_dropped_files(text) and (mentions := _dropped_images(text)) is not None:
            # Files dragged into the terminal: sent with the message, as @path sends them.
            event.stop()
            event.prevent_default()
            start, end = self.selection
            self.replace(mentions, start, end)
            return
        lines = text.count("\n") + 1
        if len(text) <= LARGE_PASTE_CHARS and lines <= LARGE_PASTE_LINES:
            return  # TextArea's own handler inserts it (the normalised text)
        event.stop()
        event.prevent_default()
        placeholder = f"[pasted text #{len(self.pastes) + 1}: {lines:,} lines, {_size(text)}]"
        self.pastes[placeholder] = text
        start, end = self.selection
        self.replace(placeholder, start, end)

    def action_paste(self) -> None:
        # Terminals paste text themselves (a bracketed paste); ctrl+v reaching here may
        # mean an image on the clipboard, which only the app can fetch.
        self.post_message(self.PasteRequested())

    def paste_app_clipboard(self) -> None:
        """What ctrl+v does without an image: Textual's own clipboard (text copied here)."""
        super().action_paste()

    def _consume(self, event: events.Key) -> None:
        event.stop()
        event.prevent_default()

    def submit(self, follow_up: bool = False) -> None:
        """Send what is typed, as Enter would."""
        self._submit(follow_up)

    def _submit(self, follow_up: bool) -> None:
        text = self.text
        if not text.strip():
            return
        self.add_history(text)
        self.reset()
        self.post_message(self.Submitted(self, self.expanded_text(text), follow_up))

    def _recall(self, step: int) -> bool:
        """Step through history; False when there is nowhere to go (plain cursor move)."""
        if not self.prompt_history:
            return False
        if self._history_index is None:
            if step > 0:
                return False
            self._draft = self.text
            index = len(self.prompt_history) - 1
        else:
            index = self._history_index + step
        if index >= len(self.prompt_history):
            self._history_index = None
            self.set_text(self._draft)
            return True
        if index < 0:
            return True  # already at the oldest entry: stay put
        self._history_index = index
        self._recalled = self.prompt_history[index]
        self.set_text(self._recalled)
        return True


def normalise_newlines(text: str) -> str:
    """CRLF and lone CR become LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _size(text: str) -> str:
    size = len(text.encode("utf-8", "surrogatepass"))
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.0f} kB"
    return f"{size / (1024 * 1024):.1f} MB"


def _may_be_dropped_files(text: str) -> bool:
    """Could this paste be dropped files' paths (absolute, perhaps quoted, or file://)?"""
    start = text.lstrip()[:7]
    return start[:1] in ("/", "'", '"', "~") or start == "file://"


def _dropped_images(text: str) -> str | None:
    from picode.tui.dropped_files import dropped_images  # the first paths pasted load it

    return dropped_images(text)
