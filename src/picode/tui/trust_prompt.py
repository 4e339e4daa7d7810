"""The trust question: shown once per folder (and again when its gated files change).

What it lists comes from the project (URLs, header and model names, the folder's own name):
each is shown on one line with control characters spelled out and cut to fit, the list
scrolls while the choices stay on screen, and the cursor starts on "Decide later", so an
Enter typed ahead never trusts a folder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from picode.ai.untrusted import one_line
from picode.tui.pickers.base import PickList

if TYPE_CHECKING:
    from picode.session.safety import ProjectTrust

#: "later": not trusted this time, asked again next time.
TrustAnswer = Literal["trusted", "untrusted", "later"]

CHOICES: tuple[tuple[TrustAnswer, str, str], ...] = (
    ("trusted", "Trust this folder", "use all of the above (asked again if it changes)"),
    ("untrusted", "Don't trust it", "ignore them here; AGENTS.md and safer settings still apply"),
    ("later", "Decide later", "ignore them this time and ask next time"),
)
#: Where the cursor starts: the answer that changes nothing.
SAFE_CHOICE = 2
#: Characters of one listed item (the dialog is at most 110 columns wide).
ITEM_WIDTH = 104


class TrustScreen(ModalScreen[TrustAnswer]):
    """Dismisses with the answer; Esc is "later"."""

    DEFAULT_CSS = """
    TrustScreen {
        align: center middle;
    }
    TrustScreen > #trust {
        width: 90%;
        max-width: 110;
        height: auto;
        max-height: 90%;
        border: round $warning;
        background: $surface;
        padding: 0 1;
    }
    TrustScreen #trust-title {
        text-style: bold;
        margin-bottom: 1;
    }
    TrustScreen #trust-list {
        height: auto;
        max-height: 40vh;
        margin-bottom: 1;
    }
    TrustScreen #trust-items {
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    TrustScreen #trust-hint {
        color: $text-muted;
        margin-top: 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("enter", "choose", "Choose", show=False),
        Binding("y", "answer('trusted')", "Trust", show=False),
        Binding("n", "answer('untrusted')", "Don't trust", show=False),
        Binding("escape", "answer('later')", "Later", show=False),
    ]

    def __init__(self, trust: ProjectTrust) -> None:
        super().__init__()
        self.trust = trust
        self.choices = PickList(self._render_choice, max_rows=len(CHOICES), id="trust-choices")

    def compose(self) -> ComposeResult:
        trust = self.trust
        folder = one_line(str(trust.folder), ITEM_WIDTH - 40)
        title = (
            f"{folder} changed since you last decided"
            if trust.changed
            else f"Do you trust the files in {folder}?"
        )
        lines = [
            one_line(f"  • {item.source}: {item.description}", ITEM_WIDTH) for item in trust.items
        ]
        with Vertical(id="trust"):
            yield Static(title, id="trust-title", markup=False)
            yield Static("Its files can do more than add context:", markup=False)
            with VerticalScroll(id="trust-list"):
                yield Static("\n".join(lines), id="trust-items", markup=False)
                if trust.context:
                    context = [
                        one_line(f"  • {i.source}: {i.description}", ITEM_WIDTH)
                        for i in trust.context
                    ]
                    yield Static(
                        "\n".join(["It also adds context, used trusted or not:", *context]),
                        id="trust-context",
                        markup=False,
                    )
            yield Static("Only trust a folder whose files you wrote or have read.", markup=False)
            yield self.choices
            yield Static(
                "↑↓ move · enter choose · y trust · n don't trust · esc later",
                id="trust-hint",
                markup=False,
            )

    def on_mount(self) -> None:
        self.choices.reset(len(CHOICES), cursor=SAFE_CHOICE)
        self.choices.focus()

    def _render_choice(self, index: int, highlighted: bool) -> Content:
        _, label, note = CHOICES[index]
        style = "$block-cursor-foreground on $block-cursor-background" if highlighted else ""
        return Content.assemble((f" {label:<18}", style), "  ", (note, "$text-muted"))

    @on(PickList.Chosen)
    def _chosen(self, event: PickList.Chosen) -> None:
        event.stop()
        self.dismiss(CHOICES[event.index][0])

    def action_move(self, delta: int) -> None:
        self.choices.move(delta)

    def action_choose(self) -> None:
        self.dismiss(CHOICES[self.choices.cursor][0])

    def action_answer(self, answer: TrustAnswer) -> None:
        self.dismiss(answer)
