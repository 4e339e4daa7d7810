"""Messages, content blocks, usage and context: the vocabulary every layer shares.

Every message converts to plain JSON-able dicts and back without loss, because sessions
are stored as JSON lines and replayed into any provider.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias

StopReason: TypeAlias = Literal["stop", "length", "toolUse", "error", "aborted"]
STOP_REASONS: frozenset[str] = frozenset({"stop", "length", "toolUse", "error", "aborted"})


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(slots=True)
class TextContent:
    text: str
    text_signature: str | None = None
    type: ClassVar[str] = "text"


@dataclass(slots=True)
class ThinkingContent:
    thinking: str
    thinking_signature: str | None = None
    redacted: bool = False
    type: ClassVar[str] = "thinking"


@dataclass(slots=True)
class ImageContent:
    data_base64: str
    mime_type: str
    type: ClassVar[str] = "image"


@dataclass(slots=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    thought_signature: str | None = None
    type: ClassVar[str] = "toolCall"


AssistantContent: TypeAlias = TextContent | ThinkingContent | ToolCall
UserContent: TypeAlias = TextContent | ImageContent
ContentBlock: TypeAlias = TextContent | ThinkingContent | ImageContent | ToolCall


@dataclass(slots=True)
class Cost:
    """US dollars."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    total: float = 0.0


@dataclass(slots=True)
class Usage:
    """Token counts; ``input`` never includes cached tokens, whatever the provider reports."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total_tokens: int = 0
    cost: Cost = field(default_factory=Cost)
    estimated: bool = False

    @property
    def context_tokens(self) -> int:
        """Tokens the request occupied in the context window, plus the reply."""
        return self.total_tokens or (self.input + self.output + self.cache_read + self.cache_write)


@dataclass(slots=True)
class UserMessage:
    content: str | list[UserContent]
    timestamp: int = field(default_factory=now_ms)
    role: ClassVar[str] = "user"

    @property
    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "".join(block.text for block in self.content if isinstance(block, TextContent))


@dataclass(slots=True)
class AssistantMessage:
    content: list[AssistantContent]
    api: str
    provider: str
    model: str
    usage: Usage = field(default_factory=Usage)
    stop_reason: StopReason = "stop"
    error_message: str | None = None
    timestamp: int = field(default_factory=now_ms)
    response_id: str | None = None
    role: ClassVar[str] = "assistant"

    @property
    def text(self) -> str:
        return "".join(block.text for block in self.content if isinstance(block, TextContent))

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [block for block in self.content if isinstance(block, ToolCall)]


@dataclass(slots=True)
class ToolResultMessage:
    tool_call_id: str
    tool_name: str
    content: list[UserContent]
    details: Any = None
    is_error: bool = False
    timestamp: int = field(default_factory=now_ms)
    role: ClassVar[str] = "toolResult"

    @property
    def text(self) -> str:
        return "".join(block.text for block in self.content if isinstance(block, TextContent))


Message: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage


@dataclass(slots=True)
class Tool:
    """What the model is told about a tool: a name, a description and a JSON Schema."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(slots=True)
class Context:
    system_prompt: str | None = None
    messages: list[Message] = field(default_factory=list)
    tools: list[Tool] | None = None


# --- JSON round-trip -------------------------------------------------------------------


def content_to_dict(block: ContentBlock) -> dict[str, Any]:
    match block:
        case TextContent(text=text, text_signature=sig):
            out: dict[str, Any] = {"type": "text", "text": text}
            if sig is not None:
                out["text_signature"] = sig
            return out
        case ThinkingContent(thinking=thinking, thinking_signature=sig, redacted=redacted):
            out = {"type": "thinking", "thinking": thinking}
            if sig is not None:
                out["thinking_signature"] = sig
            if redacted:
                out["redacted"] = True
            return out
        case ImageContent(data_base64=data, mime_type=mime):
            return {"type": "image", "data": data, "mime_type": mime}
        case ToolCall(id=call_id, name=name, arguments=args, thought_signature=sig):
            out = {"type": "toolCall", "id": call_id, "name": name, "arguments": args}
            if sig is not None:
                out["thought_signature"] = sig
            return out
    raise TypeError(f"not a content block: {block!r}")


def content_from_dict(data: dict[str, Any]) -> ContentBlock:
    if not isinstance(data, dict):
        raise ValueError(f"content block must be an object, got {type(data).__name__}")
    kind = data.get("type")
    try:
        return _content_from_dict(kind, data)
    except KeyError as exc:
        raise ValueError(f"{kind!r} content block is missing {exc.args[0]!r}") from None


def _content_from_dict(kind: Any, data: dict[str, Any]) -> ContentBlock:
    if kind == "text":
        return TextContent(str(data.get("text", "")), data.get("text_signature"))
    if kind == "thinking":
        return ThinkingContent(
            str(data.get("thinking", "")),
            data.get("thinking_signature"),
            bool(data.get("redacted", False)),
        )
    if kind == "image":
        return ImageContent(str(data["data"]), str(data["mime_type"]))
    if kind == "toolCall":
        args = data.get("arguments")
        return ToolCall(
            str(data["id"]),
            str(data["name"]),
            args if isinstance(args, dict) else {},
            data.get("thought_signature"),
        )
    raise ValueError(f"unknown content block type: {kind!r}")


def usage_to_dict(usage: Usage) -> dict[str, Any]:
    cost = usage.cost
    out: dict[str, Any] = {
        "input": usage.input,
        "output": usage.output,
        "cache_read": usage.cache_read,
        "cache_write": usage.cache_write,
        "total_tokens": usage.total_tokens,
        "cost": {
            "input": cost.input,
            "output": cost.output,
            "cache_read": cost.cache_read,
            "cache_write": cost.cache_write,
            "total": cost.total,
        },
    }
    if usage.estimated:
        out["estimated"] = True
    return out


def usage_from_dict(data: dict[str, Any] | None) -> Usage:
    if not data:
        return Usage()
    cost = data.get("cost") or {}
    return Usage(
        input=int(data.get("input", 0)),
        output=int(data.get("output", 0)),
        cache_read=int(data.get("cache_read", 0)),
        cache_write=int(data.get("cache_write", 0)),
        total_tokens=int(data.get("total_tokens", 0)),
        cost=Cost(
            input=float(cost.get("input", 0.0)),
            output=float(cost.get("output", 0.0)),
            cache_read=float(cost.get("cache_read", 0.0)),
            cache_write=float(cost.get("cache_write", 0.0)),
            total=float(cost.get("total", 0.0)),
        ),
        estimated=bool(data.get("estimated", False)),
    )


def message_to_dict(message: Message) -> dict[str, Any]:
    match message:
        case UserMessage(content=content, timestamp=ts):
            body: Any = (
                content if isinstance(content, str) else [content_to_dict(b) for b in content]
            )
            return {"role": "user", "content": body, "timestamp": ts}
        case AssistantMessage():
            out: dict[str, Any] = {
                "role": "assistant",
                "content": [content_to_dict(b) for b in message.content],
                "api": message.api,
                "provider": message.provider,
                "model": message.model,
                "usage": usage_to_dict(message.usage),
                "stop_reason": message.stop_reason,
                "timestamp": message.timestamp,
            }
            if message.error_message is not None:
                out["error_message"] = message.error_message
            if message.response_id is not None:
                out["response_id"] = message.response_id
            return out
        case ToolResultMessage():
            return {
                "role": "toolResult",
                "tool_call_id": message.tool_call_id,
                "tool_name": message.tool_name,
                "content": [content_to_dict(b) for b in message.content],
                "details": message.details,
                "is_error": message.is_error,
                "timestamp": message.timestamp,
            }
    raise TypeError(f"not a message: {message!r}")


def message_from_dict(data: dict[str, Any]) -> Message:
    if not isinstance(data, dict):
        raise ValueError(f"message must be an object, got {type(data).__name__}")
    role = data.get("role")
    try:
        return _message_from_dict(role, data)
    except KeyError as exc:
        raise ValueError(f"{role!r} message is missing {exc.args[0]!r}") from None


def _message_from_dict(role: Any, data: dict[str, Any]) -> Message:
    raw_timestamp = data.get("timestamp")
    timestamp = now_ms() if raw_timestamp is None else int(raw_timestamp)
    if role == "user":
        raw = data.get("content", "")
        content: str | list[UserContent] = (
            raw if isinstance(raw, str) else [_user_block(b) for b in raw]
        )
        return UserMessage(content, timestamp)
    if role == "assistant":
        stop = data.get("stop_reason", "stop")
        blocks = [content_from_dict(b) for b in data.get("content", [])]
        return AssistantMessage(
            content=[b for b in blocks if not isinstance(b, ImageContent)],
            api=str(data.get("api", "")),
            provider=str(data.get("provider", "")),
            model=str(data.get("model", "")),
            usage=usage_from_dict(data.get("usage")),
            stop_reason=stop if stop in STOP_REASONS else "error",
            error_message=data.get("error_message"),
            timestamp=timestamp,
            response_id=data.get("response_id"),
        )
    if role == "toolResult":
        return ToolResultMessage(
            tool_call_id=str(data["tool_call_id"]),
            tool_name=str(data.get("tool_name", "")),
            content=[_user_block(b) for b in data.get("content", [])],
            details=data.get("details"),
            is_error=bool(data.get("is_error", False)),
            timestamp=timestamp,
        )
    raise ValueError(f"unknown message role: {role!r}")


def _user_block(data: dict[str, Any]) -> UserContent:
    block = content_from_dict(data)
    if isinstance(block, TextContent | ImageContent):
        return block
    raise ValueError(f"{data.get('type')!r} is not allowed in user or tool-result content")


def tool_to_dict(tool: Tool) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
