"""Undo: ``/rewind``, ``/undo`` and moving in the session tree in place (docs/sessions.md,
"Checkpoints, rewind and the tree").

A part of ``AgentSession`` (it inherits this). The checkpoints it restores are taken by the
session's ``CheckpointKeeper`` (``session/checkpointing.py``) with the engine of
``session/checkpoints``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from picode.session.store.format import typed_text
from picode.session.store.tree import TreeNode, session_tree

if TYPE_CHECKING:
    from picode.agent.agent import Agent
    from picode.ai.models import Model
    from picode.ai.options import StreamOptions
    from picode.ai.types import AssistantMessage
    from picode.session.checkpointing import CheckpointKeeper
    from picode.session.checkpoints import RestorePlan, RestoreReport
    from picode.session.events import SwitchReason
    from picode.session.options import SessionOptions
    from picode.session.store.format import Entry
    from picode.session.store.recorder import Restored, SessionRecorder

log = logging.getLogger(__name__)

RestoreWhat = Literal["code", "conversation", "both"]
RESTORE_CHOICES: tuple[RestoreWhat, ...] = ("both", "conversation", "code")


class RewindError(ValueError):
    """A rewind or move that cannot be done; nothing was changed."""


@dataclass(slots=True)
class Checkpoint:
    """One of the person's messages on the current branch, and whether its code can be
    restored."""

    message_id: str
    text: str
    code: bool


@dataclass(slots=True)
class RewindPlan:
    """What a rewind to before ``message_id`` would do, nothing done yet."""

    message_id: str
    text: str
    """The message, given back to the editor."""
    code: RestorePlan | None
    """None when no checkpoint was taken before the message (``code_unavailable`` says why)."""
    hand_edited: list[str] = field(default_factory=list)
    """Files the restore would touch that changed since the agent's last step."""
    code_unavailable: str | None = None


@dataclass(slots=True)
class RewindResult:
    text: str
    report: RestoreReport | None = None


class RewindControls:
    _agent: Agent
    _options: SessionOptions
    _recorder: SessionRecorder
    _keeper: CheckpointKeeper

    def notify(self, text: str, level: str = "info", source: str | None = None) -> None:
        raise NotImplementedError

    def _stream_options(self, model: Model) -> StreamOptions:
        raise NotImplementedError

    def _spend(self, reply: AssistantMessage | None) -> dict[str, Any]:
        raise NotImplementedError

    @property
    def is_running(self) -> bool:
        raise NotImplementedError

    async def _switch_to(
        self, open_file: Callable[[], Restored], reason: SwitchReason, *, keep_choices: bool = False
    ) -> None:
        raise NotImplementedError

    # --- reading --------------------------------------------------------------------------

    def checkpoints(self) -> list[Checkpoint]:
        """The person's messages on the current branch, oldest first, each with whether its
        code can be restored (``/rewind`` lists these)."""
        if self._recorder.file is None:
            return []
        marks = self._keeper.marks()
        return [
            Checkpoint(entry_id, text, entry_id in marks.before)
            for entry_id, text in self._recorder.user_entries()
        ]

    def tree(self) -> list[TreeNode]:
        """Every branch of the session file, depth first, the current position marked."""
        file = self._recorder.file
        return [] if file is None else session_tree(file)

    # --- rewinding ------------------------------------------------------------------------

    async def plan_rewind(self, message_id: str) -> RewindPlan:
        """What rewinding to before ``message_id`` would change; raises ``RewindError``."""
        await self._keeper.settled()
        file = self._recorder.file
        entry = file.get_entry(message_id) if file is not None else None
        text = next((t for eid, t in self._recorder.user_entries() if eid == message_id), None)
        if file is None or entry is None or text is None:
            raise RewindError(f"no message {message_id!r} of yours on this branch")
        checkpoint = self._keeper.marks().before.get(message_id)
        store = self._keeper.store()
        if checkpoint is None or store is None:
            why = "no checkpoint of the files was taken before this message"
            return RewindPlan(message_id, text, None, code_unavailable=why)
        from picode.session.checkpoints import CheckpointError

        try:
            plan = await asyncio.to_thread(store.plan_restore, checkpoint)
            since = self._keeper.marks().after
            edited = await asyncio.to_thread(store.hand_edits, since) if since else []
        except CheckpointError as exc:
            return RewindPlan(message_id, text, None, code_unavailable=str(exc))
        touched = {change.path for change in plan.changes}
        hand = sorted(path for path in edited if path in touched)
        return RewindPlan(message_id, text, plan, hand)

    async def rewind(
        self,
        plan: RewindPlan,
        restore: RestoreWhat = "both",
        *,
        keep_hand_edits: bool = True,
    ) -> RewindResult:
        """Carry out ``plan``: the files as they were before the message (``code``), the
        conversation moved to just before it in place (``conversation``), or both. Files
        edited by hand since the agent's last step are left alone unless
        ``keep_hand_edits`` is False. Returns the message's text for the editor."""
        if self.is_running:
            raise RewindError("picode is working; press Esc to stop it first")
        if restore not in RESTORE_CHOICES:
            raise RewindError(f"restore must be one of {', '.join(RESTORE_CHOICES)}")
        report: RestoreReport | None = None
        if restore in ("code", "both"):
            if plan.code is None:
                raise RewindError(f"cannot restore the code: {plan.code_unavailable}")
            store = self._keeper.store()
            if store is None:
                raise RewindError("cannot restore the code: checkpoints are off")
            skip = plan.hand_edited if keep_hand_edits else []
            async with self._keeper.lock:
                report = await asyncio.to_thread(store.restore, plan.code, skip=skip)
            # What is on disk now is what the person chose: later hand edits count from here.
            await self._keeper.take_after()
        if restore in ("conversation", "both"):
            await self._move_to(self._parent_message(plan.message_id), "rewind")
        return RewindResult(plan.text, report)

    async def undo(self) -> RewindResult:
        """Code and conversation back to before the person's last message."""
        mine = self._recorder.user_entries()
        if not mine:
            raise RewindError("nothing to undo: no message of yours in this conversation")
        plan = await self.plan_rewind(mine[-1][0])
        return await self.rewind(plan, "both" if plan.code is not None else "conversation")

    async def navigate(self, entry_id: str, *, summarize: bool = False) -> str:
        """Go on from ``entry_id`` of the tree (conversation only). A message of the
        person's is left out and its text returned, for the editor (as /rewind does);
        ``summarize`` keeps a summary of the branch left behind as context."""
        if self.is_running:
            raise RewindError("picode is working; press Esc to stop it first")
        file = self._recorder.file
        entry = file.get_entry(entry_id) if file is not None else None
        if file is None or entry is None:
            raise RewindError(f"no entry {entry_id!r} in this session")
        node = next((n for n in session_tree(file) if n.entry_id == entry_id), None)
        if node is None:
            raise RewindError(f"entry {entry_id!r} is not a message")
        text: str = ""
        target: str | None = entry_id
        if node.role == "user":
            # From just before it (bookkeeping entries before it, a model change, stay).
            text, target = _message_text(entry), file.parent_of(entry_id)
        summary = await self._summarize_left_behind(target) if summarize else None
        await self._move_to(target, "tree", summary)
        return text

    def set_label(self, entry_id: str, label: str) -> None:
        """Name a point of the tree (an empty label clears it)."""
        file = self._recorder.ensure_file()
        if file is None or entry_id not in file:
            raise RewindError(f"no entry {entry_id!r} in this session")
        leaf = file.leaf_id
        file.append_label(entry_id, label)
        # A label is bookkeeping: the conversation goes on from where it was.
        file.branch_to(leaf)

    def _parent_message(self, message_id: str) -> str | None:
        file = self._recorder.file
        return file.parent_of(message_id) if file is not None else None

    async def _move_to(
        self, entry_id: str | None, reason: SwitchReason, summary: str | None = None
    ) -> None:
        await self._switch_to(
            lambda: self._recorder.navigate(entry_id, summary), reason, keep_choices=True
        )

    async def _summarize_left_behind(self, target: str | None) -> str | None:
        """A summary of the messages on the current branch that ``target`` leaves behind
        (the model is asked, as for a compaction); None when nothing is left behind."""
        file = self._recorder.file
        if file is None:
            return None
        kept = set(file.branch_ids(target)) if target is not None else set()
        left = [eid for eid in file.branch_ids() if eid not in kept]
        messages = [
            message
            for _, message in file.load_messages(
                [eid for eid in left if file.entry_type(eid) == "message"]
            )
        ]
        if not messages:
            return None
        from picode.session.recovery.compaction import CompactionError, summarize

        model = self._agent.state.model
        try:
            summary, reply = await summarize(
                model,
                messages,
                previous_summary=None,
                instructions=BRANCH_SUMMARY_INSTRUCTIONS,
                stream_fn=self._options.stream_fn,
                options=self._stream_options(model),
            )
        except CompactionError as exc:
            self._spend(exc.reply)
            raise RewindError(f"{exc}; nothing was moved") from exc
        self._spend(reply)
        return summary


BRANCH_SUMMARY_INSTRUCTIONS = (
    "This part of the conversation is being abandoned: the person goes back to an earlier "
    "point. Summarise in one paragraph what was tried here, what worked and what did not, "
    "so that it can inform what is done next."
)


def _message_text(entry: Entry) -> str:
    from picode.ai.types import UserMessage, message_from_dict

    try:
        message = message_from_dict(entry.data["message"])
    except (KeyError, ValueError, TypeError):
        return ""
    return typed_text(message) if isinstance(message, UserMessage) else message.text


def describe_restore(report: RestoreReport) -> str:
    """What a restore did, in a sentence or three, paths made safe for a terminal."""
    from picode.ai.untrusted import one_line

    wrote = f"wrote back {len(report.written)} file(s)" if report.written else ""
    removed = f"removed {len(report.deleted)}" if report.deleted else ""
    done = " and ".join(part for part in (wrote, removed) if part) or "no file needed restoring"
    parts = [done[0].upper() + done[1:] + "."]
    if report.skipped:
        parts.append(
            f"Kept your edits to {', '.join(one_line(p, 60) for p in report.skipped[:4])}."
        )
    if report.failed:
        shown = "; ".join(f"{one_line(p, 60)}: {one_line(why, 80)}" for p, why in report.failed[:4])
        parts.append(f"Not restored: {shown}.")
    return " ".join(parts)
