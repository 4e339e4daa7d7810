"""The completion list shown above the editor; the app drives it, it never takes focus."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.cells import cell_len
from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from picode.ai.untrusted import one_line

if TYPE_CHECKING:
    from picode.session.mcp import McpResource
    from picode.tui.completion.commands import SlashCommand

MAX_ITEMS = 50
#: Labels are padded to a common width (up to this) so descriptions line up.
LABEL_WIDTH = 25


@dataclass(slots=True, frozen=True)
class CompletionItem:
    value: str
    """What replaces the typed token (``/model``, ``src/app.py``)."""
    label: str
    detail: str = ""
    """Dimmed after the label: a command's argument hint and description."""

    @classmethod
    def for_command(cls, command: SlashCommand) -> CompletionItem:
        hint = f" {command.argument_hint}" if command.argument_hint else ""
        return cls(f"/{command.name}", f"/{command.name}{hint}", command.description)

    @classmethod
    def for_path(cls, path: str) -> CompletionItem:
        return cls(path, path)

    @classmethod
    def for_resource(cls, resource: McpResource) -> CompletionItem:
        """An MCP server's resource, ``@server:uri`` (its words are escaped when shown)."""
        mention = resource.mention[1:]
        return cls(mention, mention, resource.name or resource.description)


#: The list's height at most, and at least however short the terminal.
MAX_ROWS = 10
MIN_ROWS = 2


class CompletionPopup(OptionList, can_focus=False):
    """``show(items)``, ``hide()``, ``move(delta)``, ``selected()``: the app routes Up/Down,
    Tab/Enter and Esc here while ``is_open``."""

    DEFAULT_CSS = """
    CompletionPopup {
        display: none;
        height: auto;
        max-height: 10;  /* MAX_ROWS; less on a short terminal (_room) */
        border: none;
        padding: 0 1;
        background: $surface;
        /* One row per item however narrow the terminal: the description is cut, not wrapped. */
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    CompletionPopup.-open {
        display: block;
    }
    CompletionPopup > .option-list--option-highlighted {
        color: $block-cursor-foreground;
        background: $block-cursor-background;
        text-style: $block-cursor-text-style;
    }
    """

    def __init__(self, *, id: str | None = "completion") -> None:
        super().__init__(id=id, markup=False)
        self.items: list[CompletionItem] = []

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    def show(self, items: Sequence[CompletionItem | str]) -> None:
        """Replace the list (at most ``MAX_ITEMS``; a plain string is its own value and label)
        and open it; no items closes it."""
        self.items = [
            item if isinstance(item, CompletionItem) else CompletionItem(item, item)
            for item in items[:MAX_ITEMS]
        ]
        if not self.items:
            self.hide()
            return
        width = min(max(cell_len(item.label) for item in self.items), LABEL_WIDTH)
        self.set_options(Option(_prompt(item, width)) for item in self.items)
        self.highlighted = 0
        self.styles.max_height = self._room()
        self.add_class("-open")

    def _room(self) -> int:
        """Rows the list may take without pushing the status line, the editor or the footer
        off a short terminal (it scrolls instead); one row of the transcript stays too."""
        try:
            screen = self.screen
        except Exception:  # not mounted yet (tests that drive the popup alone)
            return MAX_ROWS
        others = sum(
            child.outer_size.height
            for child in screen.children
            if child is not self and child.id != "transcript" and child.display
        )
        return max(MIN_ROWS, min(MAX_ROWS, screen.size.height - others - 1))

    def hide(self) -> None:
        self.remove_class("-open")
        self.items = []
        self.clear_options()

    def move(self, delta: int) -> None:
        """Move the highlight, wrapping around at either end."""
        if not self.items:
            return
        current = self.highlighted or 0
        self.highlighted = (current + delta) % len(self.items)

    def selected(self) -> CompletionItem | None:
        index = self.highlighted
        if not self.is_open or index is None or not 0 <= index < len(self.items):
            return None
        return self.items[index]


def _prompt(item: CompletionItem, width: int = 0) -> Content:
    # File names and extension commands are untrusted: spelled out on one line.
    if not item.detail:
        return Content(one_line(item.label))
    label = elide_label(one_line(item.label), width)
    padding = " " * (width - cell_len(label))
    return Content.assemble(label, padding, "  ", (one_line(item.detail), "$text-muted"))


def elide_label(label: str, width: int) -> str:
    """``label`` in at most ``width`` cells: a long argument hint loses its last choices
    (``/thinking [off|minimal|…]``), so every description starts in the same column."""
    if cell_len(label) <= width:
        return label
    if label.endswith("]") and "[" in label:
        head = label[: width - 2]
        choice, word = head.rfind("|"), head.rfind(" ")
        if choice > max(word, label.index("[")):
            return head[: choice + 1] + "…]"  # /thinking [off|minimal|…]
        if word > 0:
            return head[: word + 1] + "…"  # /compact [--keep N] …
    return label[: width - 1] + "…"
