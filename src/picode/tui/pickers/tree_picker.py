"""``/tree``: the session's every branch in place; Enter goes on from the chosen point."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.content import Content

from picode.ai.untrusted import one_line
from picode.tui.pickers.base import DEFAULT_MAX_ROWS, PickerScreen
from picode.tui.pickers.choice_picker import ChoicePicker

if TYPE_CHECKING:
    from picode.session.store import TreeNode

#: How each kind of node is marked.
ROLE_MARKS = {"user": "›", "assistant": "•", "compaction": "≡", "summary": "~", "tool": "·"}


class TreePicker(PickerScreen["TreeNode", str]):
    """Dismisses with the chosen node's entry id, or None. The current position is
    highlighted first; nodes off the current branch are dimmed."""

    title_text = "Session tree"
    hint_text = "↑↓ move · enter go on from here · esc cancel · type to filter · ◀ you are here"
    placeholder = "Filter messages and labels…"
    empty_text = "No message matches"

    def __init__(self, nodes: Sequence[TreeNode], *, max_rows: int = DEFAULT_MAX_ROWS) -> None:
        super().__init__(max_rows=max_rows)
        self.nodes = list(nodes)
        children = Counter(node.parent_id for node in self.nodes)
        # Each child past the first of a node starts another branch.
        branches = 1 + sum(count - 1 for count in children.values() if count > 1)
        messages = len(self.nodes)
        self.title_text = (
            f"Session tree · {messages} message{'' if messages == 1 else 's'} · "
            f"{branches} branch{'' if branches == 1 else 'es'}"
        )
        self.title_label.update(self.title_text)

    def filter_items(self, query: str) -> Sequence[TreeNode]:
        words = query.lower().split()
        if not words:
            return self.nodes
        return [
            node
            for node in self.nodes
            if all(w in f"{node.text} {node.label or ''}".lower() for w in words)
        ]

    def initial_cursor(self, matches: Sequence[TreeNode]) -> int:
        return next((i for i, node in enumerate(matches) if node.current), 0)

    def render_item(self, item: TreeNode, highlighted: bool) -> Content:
        style = "" if item.on_branch else "$text-muted"
        parts: list[str | tuple[str, str]] = [
            ("  " * item.depth, ""),
            (f"{ROLE_MARKS.get(item.role, '?')} ", "$accent" if item.role == "user" else style),
        ]
        if item.label:
            parts.append((f"[{one_line(item.label, 40)}] ", "$warning"))
        parts.append((one_line(item.text, 200) or "(empty)", style))
        if item.current:
            parts.append(("  ◀", "$success"))
        return Content.assemble(*parts)

    def result_for(self, item: TreeNode) -> str:
        return item.entry_id


@dataclass(frozen=True, slots=True)
class MoveChoice:
    summarize: bool
    with_code: bool
    label: str


def move_choice_picker(node: TreeNode, *, code: bool) -> ChoicePicker[MoveChoice]:
    """How to go on from a point of the tree; dismisses with the choice, or None."""
    choices = [
        MoveChoice(False, False, "Go on from here (the conversation only)"),
        MoveChoice(True, False, "Go on from here, keeping a summary of the branch left"),
    ]
    if code:
        choices.append(MoveChoice(False, True, "Go on from here and restore the code as it was"))
    shown = one_line(node.text, 80) or "(empty)"
    return ChoicePicker(f"Go on from “{shown}”", choices, hint="↑↓ move · enter go · esc cancel")
