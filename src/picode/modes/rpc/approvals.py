"""Approvals over rpc: an ``approval_request`` event out, an ``approve`` command back; and
the plan of ``exit_plan_mode``: a ``plan_request`` event out, an ``answer_plan`` command back."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

from picode.session.safety import ApprovalDecision, ApprovalRequest, PlanDecision, PlanRequest

DECISIONS = ("yes", "always", "no")
PLAN_DECISIONS = ("approve", "feedback", "cancel")
PLAN_POLICIES = ("never", "edits", "all")


class RpcApprovals:
    def __init__(self, write: Callable[[dict[str, Any]], None]) -> None:
        self.write = write
        self.pending: dict[str, asyncio.Future[ApprovalDecision]] = {}
        self.plans: dict[str, asyncio.Future[PlanDecision]] = {}
        self._ids = itertools.count(1)

    async def ask(self, request: ApprovalRequest) -> ApprovalDecision:
        request_id = f"approval-{next(self._ids)}"
        future: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
        self.pending[request_id] = future
        self.write(
            {
                "type": "approval_request",
                "request_id": request_id,
                "tool_call_id": request.call_id,
                "tool_name": request.tool_name,
                "args": request.args,
                "preview": request.preview,
                "protected": request.protected,
            }
        )
        try:
            return await future
        finally:
            # Also reached when the run is aborted and this wait is cancelled.
            self.pending.pop(request_id, None)

    def resolve(self, request_id: str, decision: str, reason: str | None) -> None:
        future = self.pending.get(request_id)
        if future is None or future.done():
            known = ", ".join(self.pending) or "none"
            raise LookupError(f"no pending approval {request_id!r} (pending: {known})")
        if decision not in DECISIONS:
            raise ValueError(f"'decision' must be one of {', '.join(DECISIONS)}")
        future.set_result(ApprovalDecision(decision, reason))  # type: ignore[arg-type]

    def reject_all(self, reason: str) -> None:
        for future in self.pending.values():
            if not future.done():
                future.set_result(ApprovalDecision("no", reason))
        self.pending.clear()
        for plan in self.plans.values():
            if not plan.done():
                plan.set_result(PlanDecision("cancel"))
        self.plans.clear()

    async def ask_plan(self, request: PlanRequest) -> PlanDecision:
        request_id = f"plan-{next(self._ids)}"
        future: asyncio.Future[PlanDecision] = asyncio.get_running_loop().create_future()
        self.plans[request_id] = future
        self.write(
            {
                "type": "plan_request",
                "request_id": request_id,
                "tool_call_id": request.call_id,
                "plan": request.plan,
            }
        )
        try:
            return await future
        finally:
            self.plans.pop(request_id, None)

    def resolve_plan(
        self, request_id: str, decision: str, policy: str | None, feedback: str | None
    ) -> None:
        future = self.plans.get(request_id)
        if future is None or future.done():
            known = ", ".join(self.plans) or "none"
            raise LookupError(f"no pending plan {request_id!r} (pending: {known})")
        if decision not in PLAN_DECISIONS:
            raise ValueError(f"'decision' must be one of {', '.join(PLAN_DECISIONS)}")
        if policy is not None and policy not in PLAN_POLICIES:
            raise ValueError(f"'policy' must be one of {', '.join(PLAN_POLICIES)}")
        future.set_result(PlanDecision(decision, policy or "never", feedback))  # type: ignore[arg-type]
