"""SessionRecorder: the AgentSession's link to its session file.

It opens or creates the file, writes each finished message (the file is created on the first
one, so starting picode and quitting leaves no empty session behind), remembers which entry
each in-memory message came from (compaction needs it), and answers what the UI renders.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from picode.ai.models import Model
from picode.ai.types import AssistantMessage, Message, ToolResultMessage, UserMessage
from picode.session.paths import Paths
from picode.session.store.draft import ReplyDraft, recover_draft
from picode.session.store.format import branch_summary_message, typed_text
from picode.session.store.lock import SessionInUseError, SessionLock
from picode.session.store.sessions import (
    BranchMessages,
    NewSessionFile,
    SessionFile,
    SessionStore,
)
from picode.session.store.tree import POSITION
from picode.session.usage import SessionUsage

#: Load warnings listed one by one; the rest are counted.
_SHOWN_WARNINGS = 10


@dataclass(slots=True)
class Restored:
    messages: list[Message] = field(default_factory=list)  # the model context
    model: tuple[str, str] | None = None
    thinking: str | None = None
    fired_rules: list[str] = field(default_factory=list)
    #: The saved todo list's data as written (``session/todos.py`` reads it); None: none.
    todos: Any = None
    #: Tokens and cost of the whole branch, including what compactions summarised.
    usage: SessionUsage = field(default_factory=SessionUsage)


def coherent_context(messages: list[Message]) -> tuple[list[Message], int]:
    """The context a damaged file still makes sense as, and how many messages were left out.

    A lost line can leave a tool result whose call is gone, or a branch that starts with
    the model's turn; providers reject both. Such messages stay on disk and on screen but
    the model context starts at the first user message and skips results without a call.
    """
    out: list[Message] = []
    open_calls: set[str] = set()
    dropped = 0
    for message in messages:
        if not out and not isinstance(message, UserMessage):
            dropped += 1
            continue
        if isinstance(message, AssistantMessage):
            open_calls = {call.id for call in message.tool_calls}
        elif isinstance(message, ToolResultMessage):
            if message.tool_call_id not in open_calls:
                dropped += 1
                continue
            open_calls.discard(message.tool_call_id)
        out.append(message)
    return out, dropped


def drop_failed(messages: list[Message]) -> list[Message]:
    """Remove errored assistant messages (and results of their calls) from a context: they
    are kept in the file for the record but a retry must not replay them."""
    out: list[Message] = []
    skipped_calls: set[str] = set()
    for message in messages:
        if isinstance(message, AssistantMessage) and message.stop_reason == "error":
            skipped_calls.update(call.id for call in message.tool_calls)
            continue
        if isinstance(message, ToolResultMessage) and message.tool_call_id in skipped_calls:
            continue
        out.append(message)
    return out


class SessionRecorder:
    def __init__(
        self,
        paths: Paths,
        cwd: Path,
        notice: Callable[[str, str], None],
        *,
        subagent_of: str | None = None,
    ) -> None:
        self.store = SessionStore(paths.sessions_dir)
        #: A subagent's parent session: written in the header of the file it creates.
        self._subagent_of = subagent_of
        self.cwd = cwd
        self.file: SessionFile | None = None
        self.persistent = True
        self._notice = notice
        self._entry_ids: dict[int, str] = {}
        # What a UI renders: messages restored from the file (parsed lazily, so a huge
        # session opens at once) followed by those recorded since.
        self._restored: BranchMessages | None = None
        self._display: list[Message] = []
        #: ``!cmd`` notes not written yet: they go into the file with the conversation's
        #: next message, so a start that only ran commands leaves no session behind.
        self._held: list[Message] = []
        self._model: Model | None = None
        self._thinking: str | None = None
        self._lock: SessionLock | None = None
        #: Where a new session is to be saved, when the person named the file.
        self._new_path: Path | None = None
        self._draft = ReplyDraft()

    # --- opening -------------------------------------------------------------------------

    def open(self, spec: str | Path | NewSessionFile | None) -> Restored:
        self._entry_ids.clear()
        self._display = []
        self._held = []
        self._restored = None
        self.persistent = spec is not None
        self._draft.discard()  # a reply of the file left behind ended with its run
        self._unlock()
        self.file = None
        self._new_path = None
        if spec is None or spec == "new":
            return Restored()
        if spec == "continue":
            self.file = self.store.continue_latest(self.cwd)
            if self.file is None:
                self._notice("No earlier session in this folder; starting a new one.", "info")
                return Restored()
        elif isinstance(spec, NewSessionFile):
            # Created on the first write, like any new session (a file that appeared since
            # is opened instead: the person named it, whoever wrote it first).
            if not spec.path.exists():
                self.store.check_new_path(spec.path)
                self._new_path = spec.path.absolute()
                return Restored()
            self.file = self.store.open(spec.path, given=True)
        elif isinstance(spec, Path) or "/" in str(spec) or str(spec).endswith(".jsonl"):
            self.file = self.store.open(Path(spec), given=True)
        else:
            self.file = self.store.resume(str(spec), self.cwd)
        try:
            self._lock = SessionLock.acquire(self.file.path)
        except SessionInUseError:
            self.file = None
            raise
        # A reply that was streaming when picode stopped: its transcript says so under it.
        recover_draft(self.file)
        return self._restore(self.file)

    def _unlock(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def _restore(self, file: SessionFile) -> Restored:
        context = file.build_context()
        messages, dropped = coherent_context(list(context.messages))
        # Read after build_context: unreadable lines are only found while parsing.
        warnings = list(file.warnings)
        if dropped:
            warnings.append(
                f"{file.path.name}: {dropped} message(s) left out of the model's context "
                "because the lines they belong with are unreadable"
            )
        if warnings:
            shown = "\n".join(warnings[:_SHOWN_WARNINGS])
            more = len(warnings) - _SHOWN_WARNINGS
            if more > 0:
                shown += f"\n… and {more} more"
            self._notice(f"Session {file.path} loaded with problems:\n{shown}", "warning")
        for message, entry_id in zip(context.messages, context.message_entry_ids, strict=False):
            if entry_id is not None:
                self._entry_ids[id(message)] = entry_id
        self._restored = context.display_messages
        return Restored(
            messages=drop_failed(messages),
            model=context.model,
            thinking=context.thinking,
            fired_rules=list(context.fired_rules),
            todos=context.todos,
            usage=context.spent,
        )

    def fork(self, entry_id: str) -> tuple[Restored, str]:
        """New session holding the branch up to (not including) a user message; returns
        the restored state and that message's text, for the editor."""
        if self.file is None:
            raise ValueError("this session has no file to fork from")
        entry = self.file.get_entry(entry_id)
        if entry is None or entry.type != "message":
            raise ValueError(f"no message entry {entry_id!r} in this session")
        from picode.ai.types import message_from_dict

        message = message_from_dict(entry.data["message"])
        text = typed_text(message) if isinstance(message, UserMessage) else ""
        if entry.parent_id is None:
            self.open("new")
            return Restored(), text
        self.file = self.store.fork(self.file, entry.parent_id)
        self._unlock()
        self._lock = SessionLock.acquire(self.file.path)
        self._entry_ids.clear()
        self._display = []  # the new file holds the branch; what was recorded here is not on it
        self._held = []
        return self._restore(self.file), text

    def navigate(self, entry_id: str | None, summary: str | None = None) -> Restored:
        """Go on from ``entry_id`` in place (None: from the very start): the later entries
        stay in the file as another branch. ``summary`` (of the branch left behind) is kept
        as context at the new position. The position is written down, so the file opens
        here again."""
        file = self.file
        if file is None:
            raise ValueError("this session has no file to move in")
        file.branch_to(entry_id)
        if summary:
            file.append_message(branch_summary_message(summary))
        else:
            file.append_custom(POSITION, {})
        self._entry_ids.clear()
        self._display = []
        self._held = []
        return self._restore(file)

    # --- writing -------------------------------------------------------------------------

    def set_current(self, model: Model, thinking: str) -> None:
        self._model, self._thinking = model, thinking

    def ensure_file(self) -> SessionFile | None:
        """The session file, created on first need; None with ``--no-session``."""
        if not self.persistent:
            return None
        if self.file is None:
            self.file = self.store.create(
                self.cwd, path=self._new_path, subagent_of=self._subagent_of
            )
            self._lock = SessionLock.acquire(self.file.path)
            if self._model is not None:
                self.file.append_model_change(self._model.provider, self._model.id)
            if self._thinking is not None:
                self.file.append_thinking_level_change(self._thinking)
        return self.file

    def record_message(self, message: Message) -> str | None:
        self._display.append(message)
        file = self.ensure_file()
        if file is None:
            return None
        held, self._held = self._held, []
        for note in held:
            self._entry_ids[id(note)] = file.append_message(note)
        entry_id = file.append_message(message)
        self._entry_ids[id(message)] = entry_id
        return entry_id

    def keep_draft(self, reply: AssistantMessage) -> None:
        """The reply streaming now, kept beside the file against a crash (``draft.py``)."""
        if self.file is not None:
            self._draft.update(self.file, reply)

    def drop_draft(self) -> None:
        self._draft.discard()

    def record_note(self, message: Message) -> str | None:
        """A ``!cmd``'s output for the model: written at once into a session that has a
        file, else held until the conversation's next message."""
        if self.file is None and self.persistent:
            self._display.append(message)
            self._held.append(message)
            return None
        return self.record_message(message)

    def record_model(self, model: Model) -> None:
        self._model = model
        if self.file is not None:
            self.file.append_model_change(model.provider, model.id)

    def record_thinking(self, level: str) -> None:
        self._thinking = level
        if self.file is not None:
            self.file.append_thinking_level_change(level)

    def record_custom(self, custom_type: str, data: Any) -> None:
        file = self.ensure_file()
        if file is not None:
            file.append_custom(custom_type, data)

    def record_compaction(
        self, summary: str, first_kept: Message, tokens_before: int, details: dict[str, Any]
    ) -> None:
        entry_id = self._entry_ids.get(id(first_kept))
        if self.file is not None and entry_id is not None:
            self.file.append_compaction(summary, entry_id, tokens_before, details)

    def last_compaction_details(self) -> dict[str, Any]:
        file = self.file
        if file is None:
            return {}
        for entry_id in reversed(file.branch_ids()):
            if file.entry_type(entry_id) == "compaction":
                entry = file.get_entry(entry_id)
                details = entry.data.get("details") if entry is not None else None
                return details if isinstance(details, dict) else {}
        return {}

    def set_name(self, name: str) -> None:
        file = self.ensure_file()
        if file is not None:
            file.append_session_info(name)

    def close(self) -> None:
        self._draft.discard()
        close = getattr(self.file, "close", None)
        if callable(close):
            close()
        self._unlock()

    # --- reading -------------------------------------------------------------------------

    @property
    def session_id(self) -> str | None:
        return self.file.id if self.file is not None else None

    @property
    def path(self) -> Path | None:
        return self.file.path if self.file is not None else None

    @property
    def name(self) -> str | None:
        return self.file.name if self.file is not None else None

    @property
    def display_count(self) -> int:
        return len(self._restored or ()) + len(self._display)

    def display_range(self, start: int, stop: int) -> list[Message]:
        """Messages ``start:stop`` of everything on the branch, parsing only those."""
        restored = self._restored
        older = len(restored) if restored is not None else 0
        out: list[Message] = []
        if restored is not None and start < older:
            out.extend(restored.range(start, min(stop, older)))
        if stop > older:
            out.extend(self._display[max(0, start - older) : stop - older])
        return out

    def display_messages(self) -> list[Message]:
        return self.display_range(0, self.display_count)

    def user_entries(self) -> list[tuple[str, str]]:
        """(entry id, text) of each user message on the branch, for /fork."""
        file = self.file
        if file is None:
            return []
        restored = self._restored
        out: list[tuple[str, str]] = []
        pairs = restored.with_ids() if restored is not None else []
        recorded = [(self._entry_ids.get(id(m)), m) for m in self._display]
        for entry_id, message in [*pairs, *recorded]:
            if entry_id is not None and isinstance(message, UserMessage):
                out.append((entry_id, typed_text(message)))
        return out
