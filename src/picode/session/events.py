"""Session events: what AgentSession adds to the agent's events for front ends
(docs/architecture.md).

A session listener receives ``AgentEvent | SessionEvent``; front ends dispatch with ``match``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeAlias

from picode.agent.events import AgentEvent
from picode.session.mcp.status import McpServerStatus

if TYPE_CHECKING:
    from picode.session.todos import Todo


@dataclass(slots=True)
class AutoRetryStart:
    attempt: int
    max_attempts: int
    delay_ms: int
    error: str
    type: ClassVar[str] = "auto_retry_start"


#: ``AutoRetryEnd.final_error`` when Esc stopped the wait.
RETRY_CANCELLED = "Retry cancelled"
#: ``AutoRetryEnd.final_error`` when a message typed during the wait went out instead.
RETRY_SUPERSEDED = "Retry cancelled: the new message is sent instead"


@dataclass(slots=True)
class AutoRetryEnd:
    success: bool
    attempt: int
    #: Set when retrying gave up or was cancelled.
    final_error: str | None = None
    #: A message typed during the wait replaced the retry (which then starts over at 1).
    superseded: bool = False
    type: ClassVar[str] = "auto_retry_end"


@dataclass(slots=True)
class CompactionStart:
    reason: Literal["threshold", "overflow", "manual"]
    type: ClassVar[str] = "compaction_start"


@dataclass(slots=True)
class CompactionEnd:
    reason: Literal["threshold", "overflow", "manual"]
    summary: str | None
    tokens_before: int
    aborted: bool = False
    error: str | None = None
    type: ClassVar[str] = "compaction_end"


@dataclass(slots=True)
class RuleTriggered:
    rule: str
    scope: str
    type: ClassVar[str] = "rule_triggered"


@dataclass(slots=True)
class EditGuardAbort:
    path: str
    reason: str
    type: ClassVar[str] = "edit_guard_abort"


SwitchReason = Literal["new", "resume", "fork", "rewind", "tree"]


@dataclass(slots=True)
class SessionSwitched:
    session_id: str
    reason: SwitchReason
    type: ClassVar[str] = "session_switched"


@dataclass(slots=True)
class ModelChanged:
    provider: str
    model_id: str
    type: ClassVar[str] = "model_changed"


@dataclass(slots=True)
class ThinkingLevelChanged:
    level: str
    type: ClassVar[str] = "thinking_level_changed"


@dataclass(slots=True)
class ModeChanged:
    """Plan mode or the approval policy changed: ``mode`` is "plan", "never", "edits" or
    "all" (``AgentSession.mode``)."""

    mode: str
    type: ClassVar[str] = "mode_changed"


@dataclass(slots=True)
class QueueChanged:
    steering: list[str] = field(default_factory=list)
    follow_ups: list[str] = field(default_factory=list)
    type: ClassVar[str] = "queue_changed"


#: The ``source`` of the notice sent when the session file cannot be written.
SAVE_FAILED_SOURCE = "session-save"


@dataclass(slots=True)
class Notice:
    """Something a person should read: warnings, extension notifications."""

    level: Literal["info", "warning", "error"]
    text: str
    source: str | None = None
    type: ClassVar[str] = "notice"


@dataclass(slots=True)
class SaveFailed(Notice):
    """The session file could not be written: the conversation goes on, unsaved. A notice
    like any other on the wire (source ``session-save``); front ends tell it by its type."""

    level: Literal["info", "warning", "error"] = "error"
    text: str = ""
    source: str | None = SAVE_FAILED_SOURCE


@dataclass(slots=True)
class SessionNameChanged:
    name: str
    type: ClassVar[str] = "session_name_changed"


@dataclass(slots=True)
class McpServersChanged:
    """An MCP server connected, failed, went away or changed its tools."""

    servers: list[McpServerStatus]
    type: ClassVar[str] = "mcp_servers_changed"


@dataclass(slots=True)
class TodosChanged:
    """The model's todo list is now ``todos`` (the whole list): a ``todo`` call succeeded,
    or another conversation took this one's place (then it follows ``SessionSwitched``)."""

    todos: list[Todo]
    type: ClassVar[str] = "todos_changed"


@dataclass(slots=True)
class CustomEvent:
    """Emitted by extensions (``api.emit``); front ends may ignore it."""

    name: str
    data: Any = None
    type: ClassVar[str] = "custom"


SessionEvent: TypeAlias = (
    AutoRetryStart
    | AutoRetryEnd
    | CompactionStart
    | CompactionEnd
    | RuleTriggered
    | EditGuardAbort
    | SessionSwitched
    | ModelChanged
    | ThinkingLevelChanged
    | ModeChanged
    | QueueChanged
    | Notice
    | SessionNameChanged
    | McpServersChanged
    | TodosChanged
    | CustomEvent
)

AnySessionEvent: TypeAlias = AgentEvent | SessionEvent
