"""Undo in the TUI: /rewind (and Esc Esc on an empty editor), /undo, /tree and /label."""

from __future__ import annotations

from typing import TYPE_CHECKING

from picode.session.rewinding import describe_restore
from picode.tui.controllers.command_error import CommandError, session_of

if TYPE_CHECKING:
    from picode.session.agent_session import AgentSession
    from picode.session.rewinding import RestoreWhat, RewindPlan, RewindResult
    from picode.tui.controllers.host import CommandHost


class RewindCommands:
    def __init__(self, host: CommandHost) -> None:
        self.host = host

    def _session(self) -> AgentSession:
        session = session_of(self.host)
        if session.is_running:
            raise CommandError("picode is working; press Esc to stop it first.")
        return session

    async def rewind(self, argument: str) -> None:
        session = self._session()
        checkpoints = session.checkpoints()
        if not checkpoints:
            raise CommandError(
                "Nothing to rewind yet: rewind goes back to before one of your saved messages."
            )
        from picode.tui.pickers.rewind_picker import RewindPicker

        message_id: str | None = await self.host.push_screen_wait(RewindPicker(checkpoints))
        if message_id is not None:
            await self._rewind_to(session, message_id)

    async def _rewind_to(self, session: AgentSession, message_id: str) -> None:
        from picode.session.rewinding import RewindError
        from picode.tui.pickers.rewind_picker import rewind_choice_picker

        try:
            plan = await session.plan_rewind(message_id)
        except RewindError as exc:
            raise CommandError(f"Could not rewind: {exc}") from None
        choice = await self.host.push_screen_wait(rewind_choice_picker(plan))
        if choice is None:
            return
        try:
            result = await session.rewind(
                plan, choice.restore, keep_hand_edits=choice.keep_hand_edits
            )
        except (RewindError, OSError, ValueError) as exc:
            raise CommandError(f"Could not rewind: {exc}") from None
        self._done(plan, result, choice.restore != "code")

    async def undo(self, argument: str) -> None:
        """Code and conversation back to before your last message; asks only when files
        you edited by hand would be overwritten."""
        from picode.session.rewinding import RewindError

        session = self._session()
        mine = session.checkpoints()
        if not mine:
            raise CommandError("Nothing to undo: no message of yours in this conversation yet.")
        try:
            plan = await session.plan_rewind(mine[-1].message_id)
        except RewindError as exc:
            raise CommandError(f"Could not undo: {exc}") from None
        if plan.hand_edited:
            await self._rewind_to(session, plan.message_id)
            return
        restore: RestoreWhat = "both" if plan.code is not None else "conversation"
        try:
            result = await session.rewind(plan, restore)
        except (RewindError, OSError, ValueError) as exc:
            raise CommandError(f"Could not undo: {exc}") from None
        if plan.code is None:
            self.host.report(f"The files were not restored: {plan.code_unavailable}.", "warning")
        self._done(plan, result, True)

    def _done(self, plan: RewindPlan, result: RewindResult, moved: bool) -> None:
        parts = []
        if result.report is not None:
            parts.append(describe_restore(result.report))
        if moved:
            parts.append(
                "The conversation is back to before your message; edit it and press Enter."
            )
            if result.text:
                self.host.restore_text(result.text)
        self.host.report(" ".join(parts) or "Nothing changed.")

    async def tree(self, argument: str) -> None:
        session = self._session()
        nodes = session.tree()
        if not nodes:
            raise CommandError("The session tree is empty: nothing has been said yet.")
        from picode.tui.pickers.tree_picker import TreePicker, move_choice_picker

        entry_id: str | None = await self.host.push_screen_wait(TreePicker(nodes))
        node = next((n for n in nodes if n.entry_id == entry_id), None)
        if node is None:
            return
        code = node.role == "user" and any(
            c.message_id == node.entry_id and c.code for c in session.checkpoints()
        )
        choice = await self.host.push_screen_wait(move_choice_picker(node, code=code))
        if choice is None:
            return
        if choice.with_code:
            await self._rewind_to(session, node.entry_id)
            return
        from picode.session.rewinding import RewindError

        try:
            text = await session.navigate(node.entry_id, summarize=choice.summarize)
        except (RewindError, OSError, ValueError) as exc:
            raise CommandError(f"Could not move there: {exc}") from None
        kept = (
            " A summary of the branch left behind is kept as context." if choice.summarize else ""
        )
        self.host.report(f"The conversation goes on from there; every branch stays in /tree.{kept}")
        if text:
            self.host.restore_text(text)

    async def label(self, argument: str) -> None:
        """``/label name`` names the conversation's current point in /tree; ``/label``
        alone clears it."""
        session = self._session()
        current = next((n for n in session.tree() if n.current), None)
        if current is None:
            raise CommandError("Nothing to label yet: say something first.")
        from picode.session.rewinding import RewindError

        label = " ".join(argument.split())
        try:
            session.set_label(current.entry_id, label)
        except (RewindError, OSError) as exc:
            raise CommandError(f"Could not label: {exc}") from None
        self.host.report(f"Labelled “{label}” in /tree." if label else "Label cleared.")
