"""Undo: checkpoints of the working tree, ``/rewind``, ``/undo`` and moving in the session
tree in place (docs/sessions.md, "Checkpoints and rewind").

A part of ``AgentSession`` (it inherits this). Before each of the person's messages runs
the working tree is checkpointed (``session/checkpoints``), and when a run ends again (what
the agent left, so hand edits made since can be told apart). A checkpoint that fails never
stops the agent: a warning says undo is unavailable for that step.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from picode.session.store.tree import CHECKPOINT, TreeNode, checkpoint_marks, session_tree

if TYPE_CHECKING:
    from picode.agent.agent import Agent
    from picode.ai.models import Model
    from picode.ai.options import StreamOptions
    from picode.ai.types import AssistantMessage
    from picode.session.checkpoints import CheckpointStore, RestorePlan, RestoreReport
    from picode.session.config.settings import Settings
    from picode.session.events import SwitchReason
    from picode.session.options import SessionOptions
    from picode.session.store.format import Entry
    from picode.session.store.recorder import Restored, SessionRecorder
    from picode.session.usage import SessionUsage

log = logging.getLogger(__name__)

RestoreWhat = Literal["code", "conversation", "both"]
RESTORE_CHOICES: tuple[RestoreWhat, ...] = ("both", "conversation", "code")


#: How long a tool call waits for the checkpoint of the files before the message.
CHECKPOINT_WAIT_S = 5.0


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
    _settings: Settings
    _recorder: SessionRecorder
    _usage: SessionUsage
    _checkpoint_store: CheckpointStore | None
    _checkpoint_problem: str | None
    _checkpoint_lock: asyncio.Lock
    _checkpoints_pruned: bool
    _pruning: asyncio.Future[None] | None
    _warming: asyncio.Future[None] | None
    _checkpoints_off: bool
    _late_checkpoints: set[asyncio.Future[str | None]]
    #: The checkpoint of the message now running (``_before_message`` is handed to its tie).
    _message_checkpoint: asyncio.Future[str | None] | None
    _checkpoint_tasks: set[asyncio.Future[Any]]
    _before_message: asyncio.Future[str | None] | None

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

    # --- taking checkpoints ---------------------------------------------------------------

    def _checkpoints_store(self) -> CheckpointStore | None:
        """The engine, made on first need (its module is not imported at start-up); None
        without a session file (``--no-session``: nothing to tie checkpoints to) or when
        checkpoints are turned off in the settings."""
        wanted = self._recorder.persistent and self._settings.checkpoints.enabled
        if self._checkpoints_off:
            return None
        if self._checkpoint_store is None and wanted:
            from picode.session.checkpoints import CheckpointStore

            store_dir = self._options.paths.data_dir / "checkpoints"
            self._checkpoint_store = CheckpointStore(self._options.cwd, store_dir)
        return self._checkpoint_store

    def _warm_checkpoints(self) -> None:
        """As the session opens, in the background: a project's first capture reads every
        file (seconds in a large one); done now, the first message's checkpoint reads only
        what changed. A failure here says nothing: the first checkpoint will say it."""
        store = self._checkpoints_store()
        if store is None:
            return

        async def warm() -> None:
            async with self._checkpoint_lock:
                try:
                    await asyncio.to_thread(store.warm)
                except Exception:
                    log.debug("warming the checkpoint store failed", exc_info=True)

        self._warming = asyncio.ensure_future(warm())
        self._checkpoint_tasks.add(self._warming)
        self._warming.add_done_callback(self._checkpoint_tasks.discard)

    async def _take_checkpoint(self, label: str) -> str | None:
        """A checkpoint of the working tree now; None (with a warning once per cause)
        when it cannot be taken. One at a time, in the order they were asked for."""
        store = self._checkpoints_store()
        file = self._recorder.ensure_file()
        if store is None or file is None:
            return None
        async with self._checkpoint_lock:
            if self._checkpoints_off:  # the one before this timed out while it waited
                return None
            try:
                checkpoint = await asyncio.to_thread(store.snapshot, file.id, label)
            except Exception as exc:  # whatever went wrong, the agent goes on without undo
                log.debug("checkpoint failed", exc_info=True)
                from picode.session.checkpoints import CheckpointTimeout

                if isinstance(exc, CheckpointTimeout):
                    # Each try would cost as much again, in the background, at every message.
                    self._checkpoints_off = True
                    note = f"Undo of files is off for the rest of this session: {exc}"
                    self.notify(note, "warning", "checkpoints")
                elif str(exc) != self._checkpoint_problem:
                    self._checkpoint_problem = str(exc)
                    note = f"Undo is unavailable for this step: {exc}"
                    self.notify(note, "warning", "checkpoints")
                return None
        self._checkpoint_problem = None
        if not self._checkpoints_pruned:
            # Not one of the checkpoint tasks: no tool waits for housekeeping.
            self._checkpoints_pruned = True
            self._pruning = asyncio.ensure_future(self._prune_checkpoints(store))
        return checkpoint

    async def _prune_checkpoints(self, store: CheckpointStore) -> None:
        """Once a session: drop the checkpoints of this folder's sessions that are gone,
        and keep the store within its bounds (docs/sessions.md)."""
        current = self._recorder.session_id
        try:
            summaries = await asyncio.to_thread(self._recorder.store.list, self._options.cwd)
            live = {summary.id for summary in summaries} | ({current} if current else set())
            async with self._checkpoint_lock:
                await asyncio.to_thread(store.prune, live)
        except Exception:  # pruning is housekeeping: it never disturbs the session
            log.warning("pruning checkpoints failed", exc_info=True)

    def _in_background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._checkpoint_tasks.add(task)
        task.add_done_callback(self._checkpoint_tasks.discard)

    async def _checkpoints_done(self) -> None:
        """Every checkpoint and the housekeeping after them, before the session closes. A
        warm-up still reading a large project is stopped: quitting never waits for it."""
        if self._warming is not None and not self._warming.done():
            store = self._checkpoint_store
            if store is not None:
                store.stop()
        await self._checkpoints_settled()
        if self._pruning is not None:
            await self._pruning

    async def _checkpoints_settled(self) -> None:
        """Until every checkpoint asked for is taken and written down: before a tool may
        change a file, and before anything reads or restores them."""
        while self._checkpoint_tasks:
            await asyncio.gather(*self._checkpoint_tasks)

    def _checkpoint_before_message(self) -> None:
        """Started as the person's message starts, taken while the model is asked: it is
        off the path of the first answer, and every tool waits for it."""
        if self._checkpoints_store() is None:
            return
        self._before_message = asyncio.ensure_future(self._take_checkpoint("before message"))
        self._message_checkpoint = self._before_message
        self._checkpoint_tasks.add(self._before_message)
        self._before_message.add_done_callback(self._checkpoint_tasks.discard)

    async def _checkpoints_before_tools(self) -> None:
        """Before a tool may change a file: the checkpoints asked for are taken. A tool
        waits for them at most ``CHECKPOINT_WAIT_S``; past that it runs, and the message's
        checkpoint, taken while files may be changing, is not kept (undo is unavailable for
        that step, and the warning says so)."""
        waiting = [task for task in self._checkpoint_tasks if not task.done()]
        if not waiting:
            return
        _, late = await asyncio.wait(waiting, timeout=CHECKPOINT_WAIT_S)
        current = self._message_checkpoint
        if current is None or not late or current.done() or current in self._late_checkpoints:
            return
        self._late_checkpoints.add(current)
        self.notify(
            f"Undo is unavailable for this step: the checkpoint took longer than "
            f"{CHECKPOINT_WAIT_S:g} s, and the tools did not wait longer",
            "warning",
            "checkpoints",
        )

    def _mark_checkpoint(self, message_id: str | None) -> None:
        """Tie the checkpoint taken before the person's message to its entry."""
        taking, self._before_message = self._before_message, None
        if taking is None or message_id is None:
            return

        async def tie() -> None:
            checkpoint = await taking
            if taking in self._late_checkpoints:
                self._late_checkpoints.discard(taking)
                return
            if checkpoint is not None:
                data = {"message_id": message_id, "tree": checkpoint}
                self._recorder.record_custom(CHECKPOINT, data)

        self._in_background(tie())

    async def _checkpoint_after_run(self) -> None:
        """What the agent left on disk: hand edits are what differs from it later. Taken
        as the run ends, in the background (Esc and the next message never wait for it);
        ``prompt`` returns once it is taken."""
        if self._checkpoints_store() is None:
            return
        checkpoint = await self._take_checkpoint("after run")
        if checkpoint is not None:
            self._recorder.record_custom(CHECKPOINT, {"after": True, "tree": checkpoint})

    # --- reading --------------------------------------------------------------------------

    def checkpoints(self) -> list[Checkpoint]:
        """The person's messages on the current branch, oldest first, each with whether its
        code can be restored (``/rewind`` lists these)."""
        file = self._recorder.file
        if file is None:
            return []
        marks = checkpoint_marks(file)
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
        await self._checkpoints_settled()
        file = self._recorder.file
        entry = file.get_entry(message_id) if file is not None else None
        text = next((t for eid, t in self._recorder.user_entries() if eid == message_id), None)
        if file is None or entry is None or text is None:
            raise RewindError(f"no message {message_id!r} of yours on this branch")
        marks = checkpoint_marks(file)
        checkpoint = marks.before.get(message_id)
        store = self._checkpoints_store()
        if checkpoint is None or store is None:
            why = "no checkpoint of the files was taken before this message"
            return RewindPlan(message_id, text, None, code_unavailable=why)
        from picode.session.checkpoints import CheckpointError

        try:
            plan = await asyncio.to_thread(store.plan_restore, checkpoint)
            since = marks.after
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
            store = self._checkpoints_store()
            assert store is not None  # a plan with code came from it
            skip = plan.hand_edited if keep_hand_edits else []
            async with self._checkpoint_lock:
                report = await asyncio.to_thread(store.restore, plan.code, skip=skip)
            # What is on disk now is what the person chose: later hand edits count from here.
            await self._checkpoint_after_run()
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
    from picode.ai.types import message_from_dict

    try:
        return message_from_dict(entry.data["message"]).text
    except (KeyError, ValueError, TypeError):
        return ""


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
