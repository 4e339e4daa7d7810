"""Approval mode in the app: one inline prompt at a time above the editor.

The plan of ``exit_plan_mode`` is asked here too (``ask_plan``, tui/plan_prompt.py): one
prompt at a time whichever it is, closed by Esc the same way; Esc on it cancels the plan
and stops the run.

The session calls ``ask`` for each gated bash / write / edit call (parallel calls wait their
turn). Esc on the prompt denies the call and stops the turn: the app routes Esc here first
(``close``) through the interrupt chain, then aborts like any other Esc.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from textual.screen import Screen
    from textual.widget import Widget

    from picode.session.agent_session import AgentSession
    from picode.session.safety import ApprovalDecision, ApprovalRequest, PlanDecision, PlanRequest
    from picode.tui.approval import ApprovalPrompt
    from picode.tui.plan_prompt import PlanPrompt

T = TypeVar("T")


if TYPE_CHECKING:
    # Only for the type checker: a Protocol class costs instructions to create, on
    # the way to the first frame.
    class Aborter(Protocol):
        def abort_run(self) -> bool: ...

    class ApprovalNotifier(Protocol):
        def approval_waiting(self, tool_name: str, escalation: bool = False) -> None: ...

    class ApprovalHost(Protocol):
        """Where the prompt shows, and who hears about the calls it holds."""

        @property
        def screen_stack(self) -> list[Screen[Any]]: ...

        @property
        def editor(self) -> Widget:
            """The prompt goes above it."""
            ...

        @property
        def interrupts(self) -> Aborter: ...

        @property
        def notifier(self) -> ApprovalNotifier:
            """Told when a call starts waiting (a person who looked away hears of it)."""
            ...

        def tool_waiting(self, call_id: str, waiting: bool) -> None:
            """A call starts (True) or stops (False) waiting for an answer."""
            ...


class ApprovalController:
    def __init__(
        self, host: ApprovalHost, *, clock: Callable[[], float], arm_delay: float | None = None
    ) -> None:
        self._host = host
        self._clock = clock
        self.arm_delay = arm_delay
        self.prompt: ApprovalPrompt | PlanPrompt | None = None
        self._turn: asyncio.Lock | None = None
        self._closing = False
        #: Questions waiting, on screen or in line, per call that shows them waiting.
        self._waiting: dict[str, int] = {}

    def attach(self, session: AgentSession) -> None:
        """Become the session's approver, whatever its policy (a write to a protected path,
        a shell start-up file or picode's config, is asked about even under "never"), and
        the one asked to run a command the sandbox blocked outside it."""
        session.set_escalator(self.ask)
        session.set_approver(self.ask)
        session.set_plan_approver(self.ask_plan)

    def is_open(self) -> bool:
        return self.prompt is not None

    def close(self) -> bool:
        """Esc: deny the call on screen and have the turn stopped."""
        prompt = self.prompt
        if prompt is None:
            return False
        prompt.stop()
        return True

    def refuse_all(self) -> None:
        """The app is quitting: deny what is asked and whatever comes next."""
        self._closing = True
        if self.prompt is not None:
            self.prompt.cancel("picode is closing.")

    async def ask(self, request: ApprovalRequest) -> ApprovalDecision:
        from picode.session.safety import ApprovalDecision
        from picode.tui.approval import ask_approval

        host = self._host

        def show() -> Awaitable[ApprovalDecision]:
            host.notifier.approval_waiting(request.tool_name, request.escalation is not None)
            return ask_approval(host.screen_stack[0], request, **self._prompt_options())

        calls = [call for call in (request.call_id, request.origin_call_id) if call]
        asked = await self._one_at_a_time(calls, show)
        if asked is None:
            return ApprovalDecision("no", "picode is closing.")
        decision, aborted = asked
        if aborted:
            host.interrupts.abort_run()
        return decision

    async def ask_plan(self, request: PlanRequest) -> PlanDecision:
        from picode.session.safety import PlanDecision
        from picode.tui.plan_prompt import ask_plan

        host = self._host

        def show() -> Awaitable[PlanDecision]:
            return ask_plan(host.screen_stack[0], request, **self._prompt_options())

        asked = await self._one_at_a_time([request.call_id] if request.call_id else [], show)
        if asked is None:
            return PlanDecision("cancel")
        decision, _ = asked
        if decision.kind == "cancel":
            # As Esc does: queued messages back to the editor, the run stopped.
            host.interrupts.abort_run()
        return decision

    async def _one_at_a_time(
        self, call_ids: list[str], show: Callable[[], Awaitable[T]]
    ) -> tuple[T, bool] | None:
        """``show`` a question once no other is on screen: (its answer, whether Esc
        stopped it), or None when picode is closing. A question in line behind another
        is waited for too: its calls say so from now (``_wait``)."""
        if self._turn is None:
            self._turn = asyncio.Lock()
        self._wait(call_ids, 1)
        try:
            async with self._turn:
                if self._closing:
                    return None
                try:
                    answer = await show()
                    return answer, self.prompt is not None and self.prompt.aborted
                finally:
                    self.prompt = None
        finally:
            self._wait(call_ids, -1)

    def _prompt_options(self) -> dict[str, Any]:
        from picode.tui.approval import ARM_DELAY_S

        return {
            "before": self._host.editor,
            "clock": self._clock,
            "arm_delay": ARM_DELAY_S if self.arm_delay is None else self.arm_delay,
            "on_prompt": self._shown,
        }

    def _wait(self, call_ids: list[str], change: int) -> None:
        """Count a question in (1) or out (-1) for each call; a call shows waiting while
        any question of its own or of its subagent's is open or in line."""
        for call_id in call_ids:
            count = self._waiting.get(call_id, 0) + change
            if count > 0:
                self._waiting[call_id] = count
            else:
                self._waiting.pop(call_id, None)
            if count == (1 if change > 0 else 0):
                self._host.tool_waiting(call_id, change > 0)

    def _shown(self, prompt: ApprovalPrompt | PlanPrompt) -> None:
        self.prompt = prompt
