"""Approvals over rpc: an ``approval_request`` event out, an ``approve`` command back; and
the plan of ``exit_plan_mode``: a ``plan_request`` event out, an ``answer_plan`` command back."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

from picode.modes.rpc.pending import PendingAnswers
from picode.session.safety import ApprovalDecision, ApprovalRequest, PlanDecision, PlanRequest

DECISIONS = ("yes", "always", "project", "no")
PLAN_DECISIONS = ("approve", "feedback", "cancel")
PLAN_POLICIES = ("never", "edits", "all")


class RpcApprovals:
    def __init__(self, write: Callable[[dict[str, Any]], None]) -> None:
        ids = itertools.count(1)  # one sequence: approval-1, plan-2, approval-3…
        self._approvals = PendingAnswers[ApprovalDecision]("approval", write, ids)
        self._plans = PendingAnswers[PlanDecision]("plan", write, ids)

    @property
    def pending(self) -> dict[str, asyncio.Future[ApprovalDecision]]:
        return self._approvals.futures

    @property
    def plans(self) -> dict[str, asyncio.Future[PlanDecision]]:
        return self._plans.futures

    async def ask(self, request: ApprovalRequest) -> ApprovalDecision:
        event = {
            "type": "approval_request",
            "tool_call_id": request.call_id,
            "tool_name": request.tool_name,
            "args": request.args,
            "preview": request.preview,
            "protected": request.protected,
            "origin": request.origin,
            "origin_call_id": request.origin_call_id,
            "always_means": request.always_means,
            "can_save": request.can_save,
            "asked_by": request.asked_by,
        }
        return await self._approvals.ask(self._approvals.new_id(), event)

    def resolve(self, request_id: str, decision: str, reason: str | None) -> None:
        future = self._approvals.waiting(request_id)
        if decision not in DECISIONS:
            raise ValueError(f"'decision' must be one of {', '.join(DECISIONS)}")
        future.set_result(ApprovalDecision(decision, reason))  # type: ignore[arg-type]

    def reject_all(self, reason: str) -> None:
        self._approvals.answer_all(ApprovalDecision("no", reason))
        self._plans.answer_all(PlanDecision("cancel"))

    async def ask_plan(self, request: PlanRequest) -> PlanDecision:
        event = {"type": "plan_request", "tool_call_id": request.call_id, "plan": request.plan}
        return await self._plans.ask(self._plans.new_id(), event)

    def resolve_plan(
        self, request_id: str, decision: str, policy: str | None, feedback: str | None
    ) -> None:
        future = self._plans.waiting(request_id)
        if decision not in PLAN_DECISIONS:
            raise ValueError(f"'decision' must be one of {', '.join(PLAN_DECISIONS)}")
        if policy is not None and policy not in PLAN_POLICIES:
            raise ValueError(f"'policy' must be one of {', '.join(PLAN_POLICIES)}")
        future.set_result(PlanDecision(decision, policy or "never", feedback))  # type: ignore[arg-type]
