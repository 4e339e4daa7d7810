"""``/login``: an API key typed or pasted into a masked box of its own, never into the
editor (whose text goes to the history and the session) or onto the screen."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class KeyPrompt(ModalScreen[str | None]):
    """Dismisses with the key as typed, or None (Esc)."""

    DEFAULT_CSS = """
    KeyPrompt {
        align: center middle;
    }
    KeyPrompt > #key-box {
        width: 90%;
        max-width: 100;
        height: auto;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    KeyPrompt #key-title {
        text-style: bold;
    }
    KeyPrompt #key-input {
        border: none;
        height: 1;
        padding: 0 1;
        margin: 1 0;
        background: $background;
    }
    KeyPrompt #key-input:focus {
        border: none;
        background-tint: transparent;
    }
    KeyPrompt #key-why {
        margin-top: 1;
    }
    KeyPrompt #key-hint {
        color: $text-muted;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", show=False),
    ]

    def __init__(self, provider: str, where: Path, why: str | None = None) -> None:
        super().__init__()
        self.provider = provider
        #: What asked for the key (a message sent without one), said above the box.
        self.why = why
        self.key_input = Input(
            placeholder="Paste or type the key…", password=True, id="key-input", compact=True
        )
        self.hint = Static(
            f"enter save · esc cancel · kept in {where}, readable by you only",
            id="key-hint",
            markup=False,
        )

    def compose(self) -> ComposeResult:
        with Vertical(id="key-box"):
            yield Static(f"API key for {self.provider}", id="key-title", markup=False)
            if self.why:
                yield Static(self.why, id="key-why", markup=False)
            yield self.key_input
            yield self.hint

    def on_mount(self) -> None:
        self.key_input.focus()

    @on(Input.Submitted, "#key-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip():
            self.dismiss(event.value)
        else:
            self.hint.update("Type or paste the key, then enter (esc cancels).")

    def action_cancel(self) -> None:
        self.dismiss(None)
