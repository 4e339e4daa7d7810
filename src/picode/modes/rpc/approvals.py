"""Approvals over rpc: an ``approval_request`` event out, an ``approve`` command back."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

from picode.session.safety import ApprovalDecision, ApprovalRequest

DECISIONS = ("yes", "always", "no")


class RpcApprovals:
    def __init__(self, write: Callable[[dict[str, Any]], None]) -> None:
        self.write = write
        self.pending: dict[str, asyncio.Future[ApprovalDecision]] = {}
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
