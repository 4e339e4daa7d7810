"""The session file's tree as a person reads it: every branch, each message's first words,
labels, and where the conversation is now (``/tree``, rpc ``get_tree``).

Only messages and compactions are nodes; model and thinking changes, labels, custom
entries and the like are bookkeeping, and their children hang from the nearest message
above them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from picode.ai.types import AssistantMessage, ToolResultMessage, UserMessage, message_from_dict
from picode.session.store.format import branch_summary_of, typed_text

if TYPE_CHECKING:
    from picode.session.store.file import SessionFile
    from picode.session.store.format import Entry

NodeRole = Literal["user", "assistant", "tool", "compaction", "summary"]
#: The custom entry that keeps the conversation's position after a move in the tree (the
#: file's leaf is its last entry when it is opened again).
POSITION = "tree_position"
_FIRST_WORDS = 72


@dataclass(frozen=True, slots=True)
class TreeNode:
    entry_id: str
    parent_id: str | None
    """The nearest node above this one (bookkeeping entries skipped)."""
    role: NodeRole
    text: str
    """The first words, on one line."""
    depth: int
    label: str | None
    on_branch: bool
    """On the path from the root to where the conversation is now."""
    current: bool
    """The last message of the current branch: the conversation goes on from here."""


def first_words(text: str, limit: int = _FIRST_WORDS) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


#: Markdown's marks, left out of the first words of what a model wrote: a line's heading
#: marks, bullet or quote bar, a code fence; a link's target; emphasis and code spans.
_LINE_MARKS = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|[-*+][ \t]+|>[ \t]?|(?:```|~~~)\S*[ \t]*$)", re.M)
_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")
_EMPHASIS = re.compile(r"(\*\*|__|~~|\*)(?=\S)(.+?)(?<=\S)\1")
_CODE_SPAN = re.compile(r"`+([^`\n]+)`+")


def plain_words(markdown: str, limit: int = _FIRST_WORDS) -> str:
    """``first_words`` of Markdown, as it reads drawn: "## Plan" and "**7** files" are
    "Plan" and "7 files". A person's own text keeps its marks (``first_words``)."""
    text = _LINE_MARKS.sub("", markdown[: limit * 8])
    text = _LINK.sub(r"\1", text)
    text = _CODE_SPAN.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\2", text)
    return first_words(text, limit)


def session_tree(file: SessionFile) -> list[TreeNode]:
    """Every node, depth first, children in the order they were written."""
    entries = {entry.id: entry for entry in file.entries()}
    labels = file.labels()
    shown = {eid: described for eid, e in entries.items() if (described := _describe(e))}
    parent_of: dict[str, str | None] = {}
    children: dict[str | None, list[str]] = {}
    for entry_id in file.entry_ids():
        if entry_id not in shown:
            continue
        parent = _shown_ancestor(file, entries[entry_id].parent_id, shown)
        parent_of[entry_id] = parent
        children.setdefault(parent, []).append(entry_id)
    branch = set(file.branch_ids())
    current = next((eid for eid in reversed(file.branch_ids()) if eid in shown), None)
    out: list[TreeNode] = []
    stack: list[tuple[str, int]] = [(eid, 0) for eid in reversed(children.get(None, []))]
    while stack:
        entry_id, depth = stack.pop()
        role, text = shown[entry_id]
        out.append(
            TreeNode(
                entry_id,
                parent_of[entry_id],
                role,
                text,
                depth,
                labels.get(entry_id),
                entry_id in branch,
                entry_id == current,
            )
        )
        below = children.get(entry_id, [])
        # A single child continues the same line of talk: no extra indent for it, unless
        # the conversation now goes on from here (the next message starts a new branch).
        step = 1 if len(below) > 1 or entry_id == current else 0
        stack.extend((child, depth + step) for child in reversed(below))
    return out


def _shown_ancestor(
    file: SessionFile, entry_id: str | None, shown: dict[str, tuple[NodeRole, str]]
) -> str | None:
    for _ in range(len(file)):
        if entry_id is None or entry_id in shown:
            return entry_id
        entry_id = file.parent_of(entry_id)
    return None


def _describe(entry: Entry) -> tuple[NodeRole, str] | None:
    if entry.type == "compaction":
        return "compaction", plain_words(str(entry.data.get("summary") or "(compacted)"))
    if entry.type != "message":
        return None
    try:
        message = message_from_dict(entry.data["message"])
    except (KeyError, ValueError, TypeError):
        return None
    match message:
        case UserMessage():
            summary = branch_summary_of(message)
            if summary is not None:
                return "summary", plain_words(summary)
            return "user", first_words(typed_text(message))
        case AssistantMessage():
            text = message.text.strip()
            if not text:
                names = [call.name for call in message.tool_calls]
                text = "→ " + ", ".join(names) if names else "(no text)"
            return "assistant", plain_words(text)
        case ToolResultMessage():
            return None  # shown by the assistant message that called the tool
    return None


#: The custom entry that ties a checkpoint of the working tree to the session: taken before
#: a user message (``message_id``) or after a run (``after``: what the agent left).
CHECKPOINT = "checkpoint"


@dataclass(slots=True)
class CheckpointMarks:
    before: dict[str, str]
    """User message entry id → the checkpoint taken before it ran."""
    after: str | None
    """The checkpoint taken when the last run ended: what the agent left on disk."""


def checkpoint_marks(file: SessionFile) -> CheckpointMarks:
    """The checkpoints the file records, every branch's (parsing only those entries)."""
    marker = f'"custom_type":"{CHECKPOINT}"'.encode()
    custom = [eid for eid in file.entry_ids() if file.entry_type(eid) == "custom"]
    wanted = [eid for eid, raw in file._read_lines(custom) if marker in raw]
    marks = CheckpointMarks({}, None)
    for entry in file._parse_entries(wanted):
        data = entry.data.get("data")
        if entry.data.get("custom_type") != CHECKPOINT or not isinstance(data, dict):
            continue
        tree, message_id = data.get("tree"), data.get("message_id")
        if not isinstance(tree, str):
            continue
        if isinstance(message_id, str):
            marks.before[message_id] = tree
        elif data.get("after"):
            marks.after = tree
    return marks
