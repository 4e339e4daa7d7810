"""Rebuilding a branch's context from its file: the messages from the last compaction on,
and the model, thinking level, fired rules, todo list and spend in force at its end."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from picode.ai.types import AssistantMessage
from picode.session.store.context import BranchMessages, SessionContext
from picode.session.store.format import compaction_summary_message
from picode.session.usage import SessionUsage

if TYPE_CHECKING:
    from picode.session.store.file import SessionFile

#: The custom entry that records a stream rule firing (kept so it fires once per session).
TTSR_FIRED = "ttsr_fired"
#: The custom entry that links a subagent's session file; its ``usage`` is the child's spend,
#: which counts in the parent's.
SUBAGENT_LINK = "subagent"
#: The custom entry that saves the model's todo list each time it changes (its ``data``
#: is the whole list: the last one on the branch is the list at that point).
TODOS = "todos"


def build_context(file: SessionFile) -> SessionContext:
    path = file.branch_ids()
    slots = file._slots
    compaction_at = model_at = thinking_at = None
    custom_ids: list[str] = []
    message_ids: list[str] = []
    for index, entry_id in enumerate(path):
        kind = slots[entry_id].type
        if kind == "message":
            message_ids.append(entry_id)
        elif kind == "compaction":
            compaction_at = index
        elif kind == "model_change":
            model_at = entry_id
        elif kind == "thinking_level_change":
            thinking_at = entry_id
        elif kind == "custom":
            custom_ids.append(entry_id)
    context = SessionContext([], [], display_messages=BranchMessages(file, message_ids))
    context.model = _model_of(file, model_at)
    context.thinking = _thinking_of(file, thinking_at)
    custom_lines = file._read_lines(custom_ids)
    context.fired_rules = _fired_rules(file, custom_lines)
    context.todos = _last_todos(file, custom_lines)
    start = 0
    if compaction_at is not None:
        start = _compaction_start(file, path, compaction_at, context)
    kept = [eid for eid in path[start:] if slots[eid].type == "message"]
    for entry_id, message in file.load_messages(kept):
        context.messages.append(message)
        context.message_entry_ids.append(entry_id)
    context.spent = _spent(file, path, compaction_at, context)
    after = set(path[compaction_at + 1 :]) if compaction_at is not None else None
    newer = [eid for eid in custom_ids if after is None or eid in after]
    _add_subagents(file, newer, context.spent)
    return context


def _spent(
    file: SessionFile, path: list[str], at: int | None, context: SessionContext
) -> SessionUsage:
    """The branch's spend without parsing what a compaction summarised: its entry keeps
    the running total (a file from before it did counts only the context, as then)."""
    entry = file.get_entry(path[at]) if at is not None else None
    details = entry.data.get("details") if entry is not None else None
    base = SessionUsage.from_record(details.get("usage")) if isinstance(details, dict) else None
    newer = set(path[at + 1 :]) if base is not None and at is not None else None
    total = base or SessionUsage()
    for entry_id, message in zip(context.message_entry_ids, context.messages, strict=True):
        if isinstance(message, AssistantMessage) and (newer is None or entry_id in newer):
            total.add(message)
    return total


def _compaction_start(file: SessionFile, path: list[str], at: int, context: SessionContext) -> int:
    entry = file.get_entry(path[at])
    if entry is None:
        return 0  # unreadable compaction: fall back to the whole branch
    summary = entry.data.get("summary")
    context.messages.append(compaction_summary_message(str(summary or ""), entry.timestamp or None))
    context.message_entry_ids.append(None)
    first_kept = entry.data.get("first_kept_entry_id")
    if isinstance(first_kept, str) and first_kept in path[: at + 1]:
        return path.index(first_kept)
    if first_kept:
        file.warnings.append(
            f"{file.path.name}: compaction {entry.id} keeps from {first_kept!r}, which is "
            "not on this branch; keeping only what follows the compaction"
        )
    return at + 1


def _model_of(file: SessionFile, entry_id: str | None) -> tuple[str, str] | None:
    entry = file.get_entry(entry_id) if entry_id else None
    if entry is None:
        return None
    provider, model_id = entry.data.get("provider"), entry.data.get("model_id")
    if isinstance(provider, str) and isinstance(model_id, str):
        return provider, model_id
    return None


def _thinking_of(file: SessionFile, entry_id: str | None) -> str | None:
    entry = file.get_entry(entry_id) if entry_id else None
    level = entry.data.get("level") if entry else None
    return level if isinstance(level, str) else None


def _add_subagents(file: SessionFile, custom_ids: list[str], total: SessionUsage) -> None:
    """The spend of the subagents linked since the compaction (its total has the older)."""
    marker = f'"custom_type":"{SUBAGENT_LINK}"'.encode()
    wanted = [eid for eid, raw in file._read_lines(custom_ids) if marker in raw]
    for entry in file._parse_entries(wanted):
        data = entry.data.get("data")
        usage = SessionUsage.from_record(data.get("usage")) if isinstance(data, dict) else None
        if entry.data.get("custom_type") == SUBAGENT_LINK and usage is not None:
            total.merge(usage)


def _fired_rules(file: SessionFile, custom_lines: list[tuple[str, bytes]]) -> list[str]:
    rules: list[str] = []
    marker = f'"custom_type":"{TTSR_FIRED}"'.encode()
    wanted = [eid for eid, raw in custom_lines if marker in raw]
    for entry in file._parse_entries(wanted):
        data = entry.data.get("data")
        rule = data.get("rule") if isinstance(data, dict) else None
        fired = entry.data.get("custom_type") == TTSR_FIRED and isinstance(rule, str)
        if fired and rule not in rules:
            rules.append(str(rule))
    return rules


def _last_todos(file: SessionFile, custom_lines: list[tuple[str, bytes]]) -> Any:
    """The ``data`` of the branch's last todo list entry (None: there is none); only that
    line is parsed."""
    marker = f'"custom_type":"{TODOS}"'.encode()
    for entry_id, raw in reversed(custom_lines):
        if marker not in raw:
            continue
        for entry in file._parse_entries([entry_id]):
            if entry.data.get("custom_type") == TODOS:
                return entry.data.get("data")
    return None
