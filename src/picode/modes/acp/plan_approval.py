"""The plan of ``exit_plan_mode`` as an ACP permission request (docs/acp.md, "Modes").

The client shows the plan (the tool call's content, Markdown) with three options: approve
with edits run at once (mode "never"), approve asking before each edit (mode "edits"), or
keep planning. A cancelled request (the client's own cancel, ``session/cancel``) cancels
the plan: the run stops and plan mode stays. ACP's options carry no text, so "keep
planning" comes back to the model without the person's words.
"""

from __future__ import annotations

from typing import Any

from acp import helpers
from acp.schema import PermissionOption, ToolCallUpdate

from picode.session.safety import PlanDecision, PlanRequest

PLAN_OPTIONS = [
    PermissionOption(option_id="approve", name="Approve: edits run at once", kind="allow_once"),
    PermissionOption(
        option_id="approve_edits", name="Approve: ask before each edit", kind="allow_once"
    ),
    PermissionOption(option_id="keep_planning", name="Keep planning", kind="reject_once"),
]
_CHOSEN: dict[str, PlanDecision] = {
    "approve": PlanDecision("approve", "never"),
    "approve_edits": PlanDecision("approve", "edits"),
    "keep_planning": PlanDecision("feedback"),
}


def attach(server: Any, hosted: Any) -> None:
    """Make ``server``'s client the one that answers ``hosted``'s plans."""

    async def ask(request: PlanRequest) -> PlanDecision:
        return await ask_plan(server, hosted.session_id, request)

    hosted.session.set_plan_approver(ask)


async def ask_plan(server: Any, session_id: str, request: PlanRequest) -> PlanDecision:
    tool_call = ToolCallUpdate(
        tool_call_id=request.call_id,
        title="Plan: carry it out?",
        kind="think",
        content=[helpers.tool_content(helpers.text_block(request.plan))],
    )
    server.outbox.put(session_id, helpers.update_tool_call(request.call_id, status="pending"))
    # Updates sent before the ask must reach the client first (the call it is about).
    await server.outbox.flush()
    response = await server.conn.request_permission(
        session_id=session_id, tool_call=tool_call, options=PLAN_OPTIONS
    )
    chosen = getattr(response.outcome, "option_id", None)
    decision = _CHOSEN.get(chosen) if isinstance(chosen, str) else None
    return decision if decision is not None else PlanDecision("cancel")
