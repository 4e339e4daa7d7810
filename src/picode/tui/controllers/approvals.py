"""Approval mode in the app: one inline prompt at a time above the editor.

The session calls ``ask`` for each gated bash / write / edit call (parallel calls wait their
turn). Esc on the prompt denies the call and stops the turn: the app routes Esc here first
(``stop``) through the interrupt chain, then aborts like any other Esc.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.widget import Widget

    from picode.session.agent_session import AgentSession
    from picode.session.safety import ApprovalDecision, ApprovalRequest
    from picode.tui.approval import ApprovalPrompt


class ApprovalController:
    def __init__(
        self,
        *,
        parent: Callable[[], Widget],
        before: Callable[[], Widget | None],
        clock: Callable[[], float],
        on_abort: Callable[[], object],
        on_waiting: Callable[[str, bool], object] = lambda call_id, waiting: None,
        arm_delay: float | None = None,
    ) -> None:
        self._parent = parent
        #: Told when a call starts (True) and stops (False) waiting for an answer.
        self._on_waiting = on_waiting
        self._before = before
        self._clock = clock
        self._on_abort = on_abort
        self.arm_delay = arm_delay
        self.prompt: ApprovalPrompt | None = None
        self._turn: asyncio.Lock | None = None
        self._closing = False

    def attach(self, session: AgentSession) -> None:
        """Become the session's approver, whatever its policy (a write to a protected path,
        a shell start-up file or picode's config, is asked about even under "never"), and
        the one asked to run a command the sandbox blocked outside it."""
        session.set_escalator(self.ask)
        session.set_approver(self.ask)

    @property
    def active(self) -> bool:
        return self.prompt is not None

    def stop(self) -> bool:
        """Esc: deny the call on screen and have the turn stopped."""
        prompt = self.prompt
        if prompt is None:
            return False
        prompt.stop()
        return True

    def close(self) -> None:
        """The app is quitting: deny what is asked and whatever comes next."""
        self._closing = True
        if self.prompt is not None:
            self.prompt.cancel("picode is closing.")

    async def ask(self, request: ApprovalRequest) -> ApprovalDecision:
        from picode.session.safety import ApprovalDecision
        from picode.tui.approval import ARM_DELAY_S, ask_approval

        if self._turn is None:
            self._turn = asyncio.Lock()
        async with self._turn:
            if self._closing:
                return ApprovalDecision("no", "picode is closing.")
            self._on_waiting(request.call_id, True)
            try:
                decision = await ask_approval(
                    self._parent(),
                    request,
                    before=self._before(),
                    clock=self._clock,
                    arm_delay=ARM_DELAY_S if self.arm_delay is None else self.arm_delay,
                    on_prompt=self._shown,
                )
                aborted = self.prompt is not None and self.prompt.aborted
            finally:
                self.prompt = None
                self._on_waiting(request.call_id, False)
        if aborted:
            self._on_abort()
        return decision

    def _shown(self, prompt: ApprovalPrompt) -> None:
        self.prompt = prompt
