"""Events a provider stream emits while one assistant message is produced (docs/streaming.md).

Block events carry ``content_index`` and ``partial``, the in-flight message, shared and
mutated in place: it is a live view, never a copy, so holding on to it is cheap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal, TypeAlias

from picode.ai.types import AssistantMessage, ToolCall


@dataclass(slots=True)
class StartEvent:
    partial: AssistantMessage
    type: ClassVar[str] = "start"


@dataclass(slots=True)
class TextStartEvent:
    content_index: int
    partial: AssistantMessage
    type: ClassVar[str] = "text_start"


@dataclass(slots=True)
class TextDeltaEvent:
    content_index: int
    delta: str
    partial: AssistantMessage
    type: ClassVar[str] = "text_delta"


@dataclass(slots=True)
class TextEndEvent:
    content_index: int
    content: str
    partial: AssistantMessage
    type: ClassVar[str] = "text_end"


@dataclass(slots=True)
class ThinkingStartEvent:
    content_index: int
    partial: AssistantMessage
    type: ClassVar[str] = "thinking_start"


@dataclass(slots=True)
class ThinkingDeltaEvent:
    content_index: int
    delta: str
    partial: AssistantMessage
    type: ClassVar[str] = "thinking_delta"


@dataclass(slots=True)
class ThinkingEndEvent:
    content_index: int
    content: str
    partial: AssistantMessage
    type: ClassVar[str] = "thinking_end"


@dataclass(slots=True)
class ToolCallStartEvent:
    content_index: int
    partial: AssistantMessage
    type: ClassVar[str] = "toolcall_start"


@dataclass(slots=True)
class ToolCallDeltaEvent:
    content_index: int
    delta: str
    partial: AssistantMessage
    type: ClassVar[str] = "toolcall_delta"


@dataclass(slots=True)
class ToolCallEndEvent:
    content_index: int
    tool_call: ToolCall
    partial: AssistantMessage
    type: ClassVar[str] = "toolcall_end"


@dataclass(slots=True)
class DoneEvent:
    reason: Literal["stop", "length", "toolUse"]
    message: AssistantMessage
    type: ClassVar[str] = "done"


@dataclass(slots=True)
class ErrorEvent:
    reason: Literal["aborted", "error"]
    message: AssistantMessage
    type: ClassVar[str] = "error"


DeltaEvent: TypeAlias = TextDeltaEvent | ThinkingDeltaEvent | ToolCallDeltaEvent
AssistantMessageEvent: TypeAlias = (
    StartEvent
    | TextStartEvent
    | TextDeltaEvent
    | TextEndEvent
    | ThinkingStartEvent
    | ThinkingDeltaEvent
    | ThinkingEndEvent
    | ToolCallStartEvent
    | ToolCallDeltaEvent
    | ToolCallEndEvent
    | DoneEvent
    | ErrorEvent
)

DELTA_TYPES: tuple[type, ...] = (TextDeltaEvent, ThinkingDeltaEvent, ToolCallDeltaEvent)
