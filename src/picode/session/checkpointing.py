"""When a session's checkpoints are taken, tied to messages and waited for
(docs/sessions.md, "Checkpoints, rewind and the tree").

As each of the person's messages starts, a checkpoint of the working tree starts in the
background: it is taken while the model is asked, so the first answer never waits for it,
and every tool call waits for it (at most ``CHECKPOINT_WAIT_S``) so it holds the files as
they were before the message. When a run ends another is taken: what the agent left, against
which hand edits are told apart. A checkpoint that fails never stops the agent: a warning
says undo is unavailable for that step.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from picode.session.store.tree import CHECKPOINT, CheckpointMarks, checkpoint_marks

if TYPE_CHECKING:
    from picode.session.checkpoints import CheckpointStore
    from picode.session.config.settings import Settings
    from picode.session.options import SessionOptions
    from picode.session.store.recorder import SessionRecorder

log = logging.getLogger(__name__)

#: How long a tool call waits for the checkpoint of the files before the message.
CHECKPOINT_WAIT_S = 5.0

Notify = Callable[[str, str, str | None], None]


class CheckpointKeeper:
    """The session's checkpoints: one at a time, in the order they were asked for."""

    def __init__(
        self,
        options: SessionOptions,
        settings: Settings,
        recorder: SessionRecorder,
        notify: Notify,
    ) -> None:
        self._options = options
        self._settings = settings
        self._recorder = recorder
        self._notify = notify
        self._store: CheckpointStore | None = None
        #: Held while a checkpoint is taken or restored (the shadow index is one).
        self.lock = asyncio.Lock()
        self._tasks: set[asyncio.Future[Any]] = set()
        self._problem: str | None = None
        self._off = False
        self._warming: asyncio.Future[None] | None = None
        self._pruning: asyncio.Future[None] | None = None
        #: Handed to the message's entry once it is written (``mark``).
        self._before_message: asyncio.Future[str | None] | None = None
        #: The checkpoint of the message now running, and those taken too late to keep.
        self._message_checkpoint: asyncio.Future[str | None] | None = None
        self._late: set[asyncio.Future[str | None]] = set()

    def store(self) -> CheckpointStore | None:
        """The engine, made on first need (its module is not imported at start-up); None
        without a session file (``--no-session``: nothing to tie checkpoints to), when
        checkpoints are turned off in the settings, or after one hit git's time limit."""
        wanted = self._recorder.persistent and self._settings.checkpoints.enabled
        if self._off or not wanted:
            return None
        if self._store is None:
            from picode.session.checkpoints import CheckpointStore

            store_dir = self._options.paths.data_dir / "checkpoints"
            self._store = CheckpointStore(self._options.cwd, store_dir)
        return self._store

    def marks(self) -> CheckpointMarks:
        """The checkpoints the session file records (none without a file)."""
        file = self._recorder.file
        return CheckpointMarks({}, None) if file is None else checkpoint_marks(file)

    # --- when they are taken ---------------------------------------------------------------

    def warm(self) -> None:
        """As the session opens, in the background: a project's first capture reads every
        file (seconds in a large one); done now, the first message's checkpoint reads only
        what changed. A failure here says nothing: the first checkpoint will say it."""
        store = self.store()
        if store is None:
            return

        async def warm() -> None:
            async with self.lock:
                try:
                    await asyncio.to_thread(store.warm)
                except Exception:
                    log.debug("warming the checkpoint store failed", exc_info=True)

        self._warming = self._track(warm())

    def before_message(self) -> None:
        """Started as the person's message starts, taken while the model is asked."""
        if self.store() is None:
            return
        self._before_message = self._track(self._take("before message"))
        self._message_checkpoint = self._before_message

    def mark(self, message_id: str | None) -> None:
        """Tie the checkpoint taken before the person's message to its entry."""
        taking, self._before_message = self._before_message, None
        if taking is None or message_id is None:
            return

        async def tie() -> None:
            checkpoint = await taking
            if taking in self._late:
                self._late.discard(taking)
            elif checkpoint is not None:
                data = {"message_id": message_id, "tree": checkpoint}
                self._recorder.record_custom(CHECKPOINT, data)

        self._track(tie())

    def after_run(self) -> None:
        """As a run ends, in the background: Esc and the next message never wait for it
        (``prompt`` waits for ``settled`` before it returns)."""
        self._track(self.take_after())

    async def take_after(self) -> None:
        """What the agent left on disk (or a restore wrote): hand edits are what differs
        from it later."""
        if self.store() is None:
            return
        checkpoint = await self._take("after run")
        if checkpoint is not None:
            self._recorder.record_custom(CHECKPOINT, {"after": True, "tree": checkpoint})

    # --- waiting for them ------------------------------------------------------------------

    async def before_tools(self) -> None:
        """Before a tool may change a file: the checkpoints asked for are taken. A tool
        waits at most ``CHECKPOINT_WAIT_S``; past that it runs, and the message's
        checkpoint, taken while files may be changing, is not kept (with a warning)."""
        waiting = [task for task in self._tasks if not task.done()]
        if not waiting:
            return
        _, late = await asyncio.wait(waiting, timeout=CHECKPOINT_WAIT_S)
        current = self._message_checkpoint
        if current is None or not late or current.done() or current in self._late:
            return
        self._late.add(current)
        self._notify(
            f"Undo is unavailable for this step: the checkpoint took longer than "
            f"{CHECKPOINT_WAIT_S:g} s, and the tools did not wait longer",
            "warning",
            "checkpoints",
        )

    async def settled(self) -> None:
        """Until every checkpoint asked for is taken and written down."""
        while self._tasks:
            await asyncio.gather(*self._tasks)

    async def done(self) -> None:
        """Every checkpoint and the housekeeping after them, as the session closes. A
        warm-up still reading a large project is stopped: quitting never waits for it."""
        if self._warming is not None and not self._warming.done() and self._store is not None:
            self._store.stop()
        await self.settled()
        if self._pruning is not None:
            await self._pruning

    # --- taking one ------------------------------------------------------------------------

    async def _take(self, label: str) -> str | None:
        """A checkpoint of the working tree now; None (with a warning once per cause)
        when it cannot be taken."""
        store = self.store()
        file = self._recorder.ensure_file()
        if store is None or file is None:
            return None
        async with self.lock:
            if self._off:  # the one before this timed out while it waited
                return None
            try:
                checkpoint = await asyncio.to_thread(store.snapshot, file.id, label)
            except Exception as exc:  # whatever went wrong, the agent goes on without undo
                log.debug("checkpoint failed", exc_info=True)
                self._failed(exc)
                return None
        self._problem = None
        if self._pruning is None:
            # Not one of the tracked tasks: no tool waits for housekeeping.
            self._pruning = asyncio.ensure_future(self._prune(store))
        return checkpoint

    def _failed(self, exc: Exception) -> None:
        from picode.session.checkpoints import CheckpointTimeout

        if isinstance(exc, CheckpointTimeout):
            # Each try would cost as much again, in the background, at every message.
            self._off = True
            note = f"Undo of files is off for the rest of this session: {exc}"
            self._notify(note, "warning", "checkpoints")
        elif str(exc) != self._problem:
            self._problem = str(exc)
            self._notify(f"Undo is unavailable for this step: {exc}", "warning", "checkpoints")

    async def _prune(self, store: CheckpointStore) -> None:
        """Once a session: drop the checkpoints of this folder's sessions that are gone,
        and keep the store within its bounds (docs/sessions.md)."""
        current = self._recorder.session_id
        try:
            summaries = await asyncio.to_thread(self._recorder.store.list, self._options.cwd)
            live = {summary.id for summary in summaries} | ({current} if current else set())
            async with self.lock:
                await asyncio.to_thread(store.prune, live)
        except Exception:  # pruning is housekeeping: it never disturbs the session
            log.warning("pruning checkpoints failed", exc_info=True)

    def _track(self, work: Coroutine[Any, Any, Any]) -> asyncio.Future[Any]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task
