"""``/rewind`` (and Esc Esc on an empty editor): pick one of your messages, see what
restoring would change, choose code, conversation or both."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.content import Content

from picode.ai.untrusted import one_line
from picode.tui.pickers.base import DEFAULT_MAX_ROWS, PickerScreen
from picode.tui.pickers.choice_picker import ChoicePicker

if TYPE_CHECKING:
    from picode.session.rewinding import Checkpoint, RestoreWhat, RewindPlan

_TEXT_CHARS = 300
#: Files listed by name in the summary; the rest are counted.
_SHOWN_FILES = 8


class RewindPicker(PickerScreen["Checkpoint", str]):
    """Dismisses with the chosen message's entry id, or None. Newest first."""

    title_text = "Rewind to before one of your messages"
    hint_text = "↑↓ move · enter choose · esc cancel · type to filter · ✎ code can be restored"
    placeholder = "Filter your messages…"
    empty_text = "No message matches"

    def __init__(
        self, checkpoints: Sequence[Checkpoint], *, max_rows: int = DEFAULT_MAX_ROWS
    ) -> None:
        super().__init__(max_rows=max_rows)
        self.entries = list(reversed(checkpoints))
        self._numbers = {c.message_id: n for n, c in enumerate(checkpoints, 1)}
        self._width = len(str(len(self.entries)))

    def filter_items(self, query: str) -> Sequence[Checkpoint]:
        words = query.lower().split()
        return [c for c in self.entries if all(w in c.text.lower() for w in words)]

    def render_item(self, item: Checkpoint, highlighted: bool) -> Content:
        shown = one_line(" ".join(item.text.split()), _TEXT_CHARS) or "(empty message)"
        number = str(self._numbers[item.message_id]).rjust(self._width)
        mark = ("✎ ", "$success") if item.code else ("  ", "")
        return Content.assemble((f"{number} ", "$text-muted"), mark, shown)

    def result_for(self, item: Checkpoint) -> str:
        return item.message_id


@dataclass(frozen=True, slots=True)
class RewindChoice:
    restore: RestoreWhat
    keep_hand_edits: bool
    label: str


def rewind_choices(plan: RewindPlan) -> list[RewindChoice]:
    """What can be done with ``plan``, the safest first."""
    if plan.code is None:
        return [RewindChoice("conversation", True, "Restore the conversation")]
    if not plan.hand_edited:
        return [
            RewindChoice("both", True, "Restore code and conversation"),
            RewindChoice("conversation", True, "Restore the conversation only"),
            RewindChoice("code", True, "Restore the code only"),
        ]
    return [
        RewindChoice("both", True, "Restore code and conversation, keeping your edits"),
        RewindChoice("both", False, "Restore code and conversation, overwriting your edits"),
        RewindChoice("conversation", True, "Restore the conversation only"),
        RewindChoice("code", True, "Restore the code only, keeping your edits"),
        RewindChoice("code", False, "Restore the code only, overwriting your edits"),
    ]


def plan_lines(plan: RewindPlan) -> list[str]:
    """What restoring the code would do, in a few lines (paths shown escaped)."""
    if plan.code is None:
        return [f"The code cannot be restored: {one_line(plan.code_unavailable or '', 200)}."]
    changes = plan.code.changes
    if not changes:
        return ["No file changed since this message: only the conversation moves."]
    lines = [f"Restoring the code changes {len(changes)} file(s):"]
    marks = {"write": "M", "recreate": "A", "delete": "D"}
    notes = {"recreate": "  (deleted since: written again)", "delete": "  (new since: removed)"}
    for change in changes[:_SHOWN_FILES]:
        counts = ""
        if change.action == "write":
            counts = (
                "  (binary)" if change.added is None else f"  +{change.added} −{change.removed}"
            )
        note = notes.get(change.action, "")
        lines.append(f"  {marks[change.action]} {one_line(change.path, 90)}{counts}{note}")
    if len(changes) > _SHOWN_FILES:
        lines.append(f"  … and {len(changes) - _SHOWN_FILES} more")
    if plan.hand_edited:
        names = ", ".join(one_line(p, 60) for p in plan.hand_edited[:4])
        more = f" and {len(plan.hand_edited) - 4} more" if len(plan.hand_edited) > 4 else ""
        lines.append(f"You changed {names}{more} by hand since picode's last step.")
    return lines


def rewind_choice_picker(plan: RewindPlan) -> ChoicePicker[RewindChoice]:
    """Shows what the rewind would change; dismisses with the choice, or None."""
    message = one_line(" ".join(plan.text.split()), 80) or "(empty message)"
    title = "\n".join([f"Rewind to before “{message}”", *plan_lines(plan)])
    return ChoicePicker(title, rewind_choices(plan), hint="↑↓ move · enter do it · esc cancel")
