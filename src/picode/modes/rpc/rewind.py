"""The rpc commands of undo (docs/cli.md, "Commands" of the RPC mode): checkpoints,
rewind and undo, the session tree, moving in it and labels."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from picode.modes.rpc.commands import Handler, RpcError, RpcServer
from picode.session.rewinding import RESTORE_CHOICES

if TYPE_CHECKING:
    from picode.session.checkpoints import RestoreReport
    from picode.session.rewinding import RewindPlan


async def _idle(server: RpcServer) -> None:
    """A client that acts the moment it reads agent_end waits for the run to wind down."""
    if server.busy and not await server.settled():
        raise RpcError("busy: picode is working; abort first")


async def get_checkpoints(server: RpcServer, command: dict[str, Any]) -> Any:
    return {
        "checkpoints": [
            {"message_id": c.message_id, "text": c.text, "code": c.code}
            for c in server.session.checkpoints()
        ]
    }


async def rewind(server: RpcServer, command: dict[str, Any]) -> Any:
    """``{message_id, restore: code|conversation|both, keep_hand_edits?, dry_run?}``."""
    message_id = command.get("message_id")
    if not isinstance(message_id, str):
        raise RpcError("'message_id' must be one of get_checkpoints' message ids")
    restore = command.get("restore", "both")
    if restore not in RESTORE_CHOICES:
        raise RpcError("'restore' must be code, conversation or both")
    keep = command.get("keep_hand_edits", True)
    if not isinstance(keep, bool):
        raise RpcError("'keep_hand_edits' must be true or false")
    await _idle(server)
    plan = await server.session.plan_rewind(message_id)
    if command.get("dry_run"):
        return {"plan": plan_dict(plan)}
    result = await server.session.rewind(plan, restore, keep_hand_edits=keep)
    return {"plan": plan_dict(plan), "text": result.text, "report": report_dict(result.report)}


async def undo(server: RpcServer, command: dict[str, Any]) -> Any:
    await _idle(server)
    result = await server.session.undo()
    return {"text": result.text, "report": report_dict(result.report)}


async def get_tree(server: RpcServer, command: dict[str, Any]) -> Any:
    return {
        "nodes": [
            {
                "entry_id": node.entry_id,
                "parent_id": node.parent_id,
                "role": node.role,
                "text": node.text,
                "depth": node.depth,
                "label": node.label,
                "on_branch": node.on_branch,
                "current": node.current,
            }
            for node in server.session.tree()
        ]
    }


async def navigate(server: RpcServer, command: dict[str, Any]) -> Any:
    """``{entry_id, summarize?}``: go on from that point of the tree (conversation only)."""
    entry_id = command.get("entry_id")
    if not isinstance(entry_id, str):
        raise RpcError("'entry_id' must be one of get_tree's entry ids")
    summarize = command.get("summarize", False)
    if not isinstance(summarize, bool):
        raise RpcError("'summarize' must be true or false")
    await _idle(server)
    text = await server.session.navigate(entry_id, summarize=summarize)
    return {"text": text}


async def set_label(server: RpcServer, command: dict[str, Any]) -> Any:
    entry_id, label = command.get("entry_id"), command.get("label", "")
    if not isinstance(entry_id, str) or not isinstance(label, str):
        raise RpcError("give 'entry_id' (from get_tree) and 'label' (\"\" clears it)")
    server.session.set_label(entry_id, label)


def plan_dict(plan: RewindPlan) -> dict[str, Any]:
    code = plan.code
    return {
        "message_id": plan.message_id,
        "text": plan.text,
        "code_unavailable": plan.code_unavailable,
        "hand_edited": list(plan.hand_edited),
        "changes": []
        if code is None
        else [
            {"path": c.path, "action": c.action, "added": c.added, "removed": c.removed}
            for c in code.changes
        ],
    }


def report_dict(report: RestoreReport | None) -> dict[str, Any] | None:
    if report is None:
        return None
    return {
        "written": list(report.written),
        "deleted": list(report.deleted),
        "skipped": list(report.skipped),
        "failed": [{"path": path, "reason": reason} for path, reason in report.failed],
    }


HANDLERS: dict[str, Handler] = {
    "get_checkpoints": get_checkpoints,
    "rewind": rewind,
    "undo": undo,
    "get_tree": get_tree,
    "navigate": navigate,
    "set_label": set_label,
}
