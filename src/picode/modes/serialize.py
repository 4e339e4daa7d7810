"""Session and agent events as JSON objects, for ``--mode json`` and ``--mode rpc``.

Message updates carry the delta only, not the whole partial message: a reader that wants
the full text accumulates deltas or waits for ``message_end``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from picode.agent.events import (
    AgentEnd,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionUpdate,
    TurnEnd,
)
from picode.agent.tool import ToolResult
from picode.ai.events import (
    DoneEvent,
    ErrorEvent,
    TextDeltaEvent,
    TextEndEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
)
from picode.ai.redaction import DeltaRedactor
from picode.ai.types import content_to_dict, message_to_dict


def tool_result_to_dict(result: ToolResult) -> dict[str, Any]:
    return {
        "content": [content_to_dict(block) for block in result.content],
        "details": _plain(result.details),
        "is_error": result.is_error,
    }


def event_to_dict(event: Any) -> dict[str, Any]:
    match event:
        case MessageUpdate(event=inner):
            payload: dict[str, Any] = {"type": inner.type}
            if hasattr(inner, "content_index"):
                payload["content_index"] = inner.content_index
            if hasattr(inner, "delta"):
                payload["delta"] = inner.delta
            if isinstance(inner, ToolCallEndEvent):
                payload["tool_call"] = content_to_dict(inner.tool_call)
            if isinstance(inner, DoneEvent | ErrorEvent):
                payload["reason"] = inner.reason
            return {"type": "message_update", "event": payload}
        case MessageStart(message=message) | MessageEnd(message=message):
            return {"type": event.type, "message": message_to_dict(message)}
        case TurnEnd(message=message, tool_results=results):
            return {
                "type": "turn_end",
                "message": message_to_dict(message),
                "tool_results": [message_to_dict(r) for r in results],
            }
        case AgentEnd(messages=messages):
            return {"type": "agent_end", "messages": [message_to_dict(m) for m in messages]}
        case ToolExecutionUpdate(partial=partial):
            return {
                "type": event.type,
                "tool_call_id": event.tool_call_id,
                "tool_name": event.tool_name,
                "partial": tool_result_to_dict(partial),
            }
        case ToolExecutionEnd(result=result):
            return {
                "type": event.type,
                "tool_call_id": event.tool_call_id,
                "tool_name": event.tool_name,
                "result": tool_result_to_dict(result),
                "is_error": event.is_error,
            }
    if dataclasses.is_dataclass(event) and not isinstance(event, type):
        out = {"type": getattr(event, "type", type(event).__name__)}
        for item in dataclasses.fields(event):
            out[item.name] = _plain(getattr(event, item.name))
        return out
    return {"type": getattr(event, "type", type(event).__name__)}


class RedactedEvents:
    """``event_to_dict`` for a stream a program reads (json, rpc): a key the model writes is
    masked even when the throttle cut it between two deltas. Each block's deltas hold back
    their unfinished last word; what is held comes as one more delta before the block's
    end (or the message's, if it ended without one). Whole lines are redacted as well, by
    the writer."""

    def __init__(self) -> None:
        self._held = DeltaRedactor()
        self._kinds: dict[int, str] = {}

    def dicts(self, event: Any) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        match event:
            case MessageUpdate(
                event=TextDeltaEvent() | ThinkingDeltaEvent() | ToolCallDeltaEvent() as inner
            ):
                self._kinds[inner.content_index] = inner.type
                payload = event_to_dict(event)
                payload["event"]["delta"] = self._held.delta(inner.content_index, inner.delta)
                return [payload]
            case MessageUpdate(
                event=TextEndEvent() | ThinkingEndEvent() | ToolCallEndEvent() as end
            ):
                rest = self._held.end(end.content_index)
                if rest:
                    kind = self._kinds.pop(end.content_index, "text_delta")
                    out.append(_delta(kind, end.content_index, rest))
            case MessageStart() | MessageEnd():
                for index, rest in self._held.end_all().items():
                    out.append(_delta(self._kinds.get(index, "text_delta"), index, rest))
                self._kinds.clear()
        out.append(event_to_dict(event))
        return out


def _delta(kind: str, index: int, text: str) -> dict[str, Any]:
    event = {"type": kind, "content_index": index, "delta": text}
    return {"type": "message_update", "event": event}


def _plain(value: Any) -> Any:
    """Best effort to JSON-able data; unknown objects become their repr."""
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if isinstance(value, dict):
            return {str(k): _plain(v) for k, v in value.items()}
        if isinstance(value, list | tuple | set):
            return [_plain(v) for v in value]
        return repr(value)


def session_header(session: Any) -> dict[str, Any]:
    """The session file's header line; a made-up one (``id`` null) with ``--no-session``."""
    header: dict[str, Any] | None = session.session_header()
    if header is not None:
        return header
    from picode.session.store import FORMAT_VERSION, now_ms

    return {
        "type": "session",
        "version": FORMAT_VERSION,
        "id": None,
        "timestamp": now_ms(),
        "cwd": str(session.cwd),
        "path": None,
    }


#: What ``json.dumps(ensure_ascii=False)`` leaves raw that a terminal acts on or hides: DEL,
#: the C1 controls (0x9b is a CSI) and bidi / invisible format characters. They can only be
#: inside JSON strings, where ``\\uXXXX`` is the same value.
_RAW_IN_JSON = re.compile("[\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]")


def dumps(obj: dict[str, Any]) -> str:
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=repr)
    if _RAW_IN_JSON.search(text) is None:
        return text
    return _RAW_IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
