"""Session events as ACP ``session/update`` payloads (None for events ACP has no place for)."""

from __future__ import annotations

from typing import Any

from picode.agent.events import MessageUpdate, ToolExecutionEnd, ToolExecutionStart
from picode.ai.events import TextDeltaEvent, ThinkingDeltaEvent

TOOL_KINDS = {
    "read": "read",
    "write": "edit",
    "edit": "edit",
    "bash": "execute",
    "grep": "search",
    "find": "search",
    "ls": "search",
}


def event_to_update(event: Any) -> Any:
    from acp import helpers
    from acp.schema import ToolCallLocation

    match event:
        case MessageUpdate(event=TextDeltaEvent(delta=delta)):
            return helpers.update_agent_message_text(delta)
        case MessageUpdate(event=ThinkingDeltaEvent(delta=delta)):
            return helpers.update_agent_thought_text(delta)
        case ToolExecutionStart(tool_call_id=call_id, tool_name=name, args=args):
            path = args.get("path") if isinstance(args, dict) else None
            locations = [ToolCallLocation(path=str(path))] if path else None
            return helpers.start_tool_call(
                call_id,
                _title(name, args),
                kind=TOOL_KINDS.get(name, "other"),  # type: ignore[arg-type]
                status="in_progress",
                locations=locations,
                raw_input=args,
            )
        case ToolExecutionEnd(tool_call_id=call_id, result=result, is_error=failed):
            text = "".join(getattr(block, "text", "") for block in result.content)
            return helpers.update_tool_call(
                call_id,
                status="failed" if failed else "completed",
                content=[helpers.tool_content(helpers.text_block(text))] if text else None,
            )
    return None


def _title(name: str, args: Any) -> str:
    if isinstance(args, dict):
        detail = args.get("command") or args.get("path") or args.get("pattern")
        if detail:
            return f"{name} {detail}"
    return name
