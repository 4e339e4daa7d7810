"""Agent events (docs/architecture.md): small typed objects that front ends ``match`` on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias

from picode.agent.tool import ToolResult
from picode.ai.events import AssistantMessageEvent
from picode.ai.types import AssistantMessage, Message, ToolResultMessage


@dataclass(slots=True)
class AgentStart:
    type: ClassVar[str] = "agent_start"


@dataclass(slots=True)
class AgentEnd:
    #: Messages added during this run, in order.
    messages: list[Message]
    type: ClassVar[str] = "agent_end"


@dataclass(slots=True)
class TurnStart:
    type: ClassVar[str] = "turn_start"


@dataclass(slots=True)
class TurnEnd:
    message: AssistantMessage
    tool_results: list[ToolResultMessage]
    type: ClassVar[str] = "turn_end"


@dataclass(slots=True)
class MessageStart:
    message: Message
    type: ClassVar[str] = "message_start"


@dataclass(slots=True)
class MessageUpdate:
    message: AssistantMessage
    event: AssistantMessageEvent
    type: ClassVar[str] = "message_update"


@dataclass(slots=True)
class MessageEnd:
    message: Message
    type: ClassVar[str] = "message_end"


@dataclass(slots=True)
class ToolExecutionStart:
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    type: ClassVar[str] = "tool_execution_start"


@dataclass(slots=True)
class ToolExecutionUpdate:
    tool_call_id: str
    tool_name: str
    partial: ToolResult
    type: ClassVar[str] = "tool_execution_update"


@dataclass(slots=True)
class ToolExecutionEnd:
    tool_call_id: str
    tool_name: str
    result: ToolResult
    is_error: bool
    type: ClassVar[str] = "tool_execution_end"


AgentEvent: TypeAlias = (
    AgentStart
    | AgentEnd
    | TurnStart
    | TurnEnd
    | MessageStart
    | MessageUpdate
    | MessageEnd
    | ToolExecutionStart
    | ToolExecutionUpdate
    | ToolExecutionEnd
)
