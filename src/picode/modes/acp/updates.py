"""Session events and saved messages as ACP ``session/update`` payloads.

Live events (``event_to_update``) and a resumed session's history (``history_updates``)
share the tool call vocabulary: kind, a title a person can read, the paths it touches as
absolute locations, and the tool's text output. The model's todo list is ACP's plan: each
change sends the whole list (``plan_update``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import helpers
from acp.schema import (
    AgentPlanUpdate,
    ContentToolCallContent,
    Cost,
    FileEditToolCallContent,
    TerminalToolCallContent,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolKind,
    Usage,
    UsageUpdate,
)

from picode.agent.events import (
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionStart,
    ToolExecutionUpdate,
)
from picode.agent.file_blocks import is_note, read_file_block
from picode.agent.tool import ToolError, ToolResult
from picode.ai.events import TextDeltaEvent, TextEndEvent, ThinkingDeltaEvent, ThinkingEndEvent
from picode.ai.redaction import DeltaRedactor
from picode.ai.types import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from picode.ai.untrusted import one_line
from picode.modes.acp.terminal import TERMINAL_ID
from picode.session.events import ModeChanged, TodosChanged
from picode.session.todos import Todo
from picode.tools._paths import resolve_path

if TYPE_CHECKING:
    from picode.session.agent_session import AgentSession

Update = Any  # one of the SessionNotification.update variants
ToolContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

TOOL_KINDS: dict[str, ToolKind] = {
    "read": "read",
    "write": "edit",
    "edit": "edit",
    "bash": "execute",
    "grep": "search",
    "find": "search",
    "ls": "search",
    "todo": "think",
}
#: The argument each tool's title shows.
TITLE_ARGUMENT = {"bash": "command", "grep": "pattern", "find": "pattern"}
MAX_TITLE_CHARS = 120


class ReplyChunks:
    """The reply's text and thought as ACP chunks, with a key the model writes masked even
    when the throttle cut it between two deltas: each block holds back its unfinished last
    word until the next delta or its end (``picode.ai.redaction.DeltaRedactor``)."""

    def __init__(self) -> None:
        self._held = DeltaRedactor()
        self._thoughts: set[int] = set()

    def updates(self, event: Any) -> list[Update]:
        match event:
            case MessageUpdate(event=TextDeltaEvent(content_index=index, delta=delta)):
                return self._chunks({index: self._held.delta(index, delta)})
            case MessageUpdate(event=ThinkingDeltaEvent(content_index=index, delta=delta)):
                self._thoughts.add(index)
                return self._chunks({index: self._held.delta(index, delta)})
            case MessageUpdate(event=TextEndEvent(content_index=index)):
                return self._chunks({index: self._held.end(index)})
            case MessageUpdate(event=ThinkingEndEvent(content_index=index)):
                return self._chunks({index: self._held.end(index)})
            case MessageStart() | MessageEnd():
                chunks = self._chunks(self._held.end_all())
                self._thoughts.clear()
                return chunks
        return []

    def _chunks(self, texts: dict[int, str]) -> list[Update]:
        return [
            helpers.update_agent_thought_text(text)
            if index in self._thoughts
            else helpers.update_agent_message_text(text)
            for index, text in texts.items()
            if text
        ]


def event_to_update(event: Any, cwd: Path) -> Update | None:
    """The update for a live tool event; None for events ACP has no place for (tool ends
    are ``tool_finished``: they may carry a diff; the reply's chunks are ``ReplyChunks``)."""
    match event:
        case TodosChanged(todos=todos):
            return plan_update(todos)
        case ToolExecutionStart(tool_call_id=call_id, tool_name=name, args=args):
            return tool_started(call_id, name, args, cwd, status="in_progress")
        case ModeChanged(mode=mode):
            # Also when picode changed it (a plan approved leaves plan mode).
            return helpers.update_current_mode(mode)
        case ToolExecutionUpdate(tool_call_id=call_id, partial=partial):
            terminal = terminal_content(partial)
            if terminal is not None:
                return helpers.update_tool_call(call_id, content=terminal)
            # bash's output so far (its tail): each update replaces the last one.
            return helpers.update_tool_call(call_id, content=text_content(partial.content))
    return None


def plan_update(todos: Iterable[Todo]) -> AgentPlanUpdate:
    """The whole list as ACP's plan (an empty one clears it); picode's items have no
    priority, so each is ``medium``."""
    return helpers.update_plan(
        helpers.plan_entry(todo.content, priority="medium", status=todo.status) for todo in todos
    )


def tool_started(
    call_id: str, name: str, args: Any, cwd: Path, *, status: Any = "pending"
) -> ToolCallStart:
    return helpers.start_tool_call(
        call_id,
        tool_title(name, args),
        kind=TOOL_KINDS.get(name, "other"),
        status=status,
        locations=tool_locations(args, cwd),
        raw_input=args,
    )


def tool_finished(
    call_id: str, result: ToolResult, failed: bool, diff: list[FileEditToolCallContent] | None
) -> ToolCallProgress:
    # A command that ran in the editor's terminal shows there; its text would repeat it.
    output = terminal_content(result) or text_content(result.content) or []
    content: list[ToolContent] = [*(diff or []), *output]
    return helpers.update_tool_call(
        call_id, status="failed" if failed else "completed", content=content or None
    )


def tool_title(name: str, args: Any) -> str:
    if not isinstance(args, dict):
        return one_line(name)
    detail = args.get(TITLE_ARGUMENT.get(name, "path"))
    if not isinstance(detail, str) or not detail.strip():
        return one_line(name)
    # Spelled out: the title is what a person reads when asked to allow the call.
    first = one_line(detail.strip().split("\n")[0], MAX_TITLE_CHARS)
    return f"{one_line(name)} {first}"


def tool_locations(args: Any, cwd: Path) -> list[ToolCallLocation] | None:
    raw = args.get("path") if isinstance(args, dict) else None
    if not isinstance(raw, str):
        return None
    try:
        path = resolve_path(cwd, raw)
    except ToolError:
        return None
    offset = args.get("offset")
    line = offset if isinstance(offset, int) and offset > 0 else None
    return [ToolCallLocation(path=str(path), line=line)]


def terminal_content(result: ToolResult) -> list[TerminalToolCallContent] | None:
    details = result.details
    terminal_id = details.get(TERMINAL_ID) if isinstance(details, dict) else None
    return [helpers.tool_terminal_ref(terminal_id)] if isinstance(terminal_id, str) else None


def text_content(blocks: Any) -> list[ContentToolCallContent] | None:
    text = "".join(block.text for block in blocks if isinstance(block, TextContent))
    return [helpers.tool_content(helpers.text_block(text))] if text else None


def resumed_updates(session: AgentSession, cwd: Path) -> Iterator[Update]:
    """A loaded session as the client would have seen it live: its history, then its plan."""
    yield from history_updates(session.display_messages(), cwd)
    if todos := session.todos:
        yield plan_update(todos)


def history_updates(messages: list[Message], cwd: Path) -> Iterator[Update]:
    """A saved conversation replayed as the client would have seen it live."""
    for message in messages:
        if isinstance(message, UserMessage):
            yield from _user_updates(message)
        elif isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, TextContent) and block.text:
                    yield helpers.update_agent_message_text(block.text)
                elif isinstance(block, ThinkingContent) and block.thinking and not block.redacted:
                    yield helpers.update_agent_thought_text(block.thinking)
                elif isinstance(block, ToolCall):
                    yield tool_started(block.id, block.name, block.arguments, cwd)
        elif isinstance(message, ToolResultMessage):
            yield helpers.update_tool_call(
                message.tool_call_id,
                status="failed" if message.is_error else "completed",
                content=text_content(message.content),
            )


def _user_updates(message: UserMessage) -> Iterator[Update]:
    if isinstance(message.content, str):
        if message.content:
            yield helpers.update_user_message_text(message.content)
        return
    for block in message.content:
        if isinstance(block, ImageContent):
            yield helpers.update_user_message(
                helpers.image_block(block.data_base64, block.mime_type)
            )
        elif not block.text or is_note(block.text):
            continue  # picode's note to the model is not part of what was sent
        elif (file := read_file_block(block.text)) is not None:
            # An @path the text names: said, as the TUI says it, not its contents again.
            yield helpers.update_user_message_text(file[0].describe())
        else:
            yield helpers.update_user_message_text(block.text)


def usage_update(session: Any) -> UsageUpdate:
    """The session's context use and spend, as ACP reports them."""
    return UsageUpdate(
        session_update="usage_update",
        used=session.context_tokens,
        size=session.context_window,
        cost=Cost(amount=session.usage.cost, currency="USD"),
    )


def turn_usage(before: Any, session: Any) -> Usage:
    """The tokens one prompt used: the session's usage now less ``before``."""
    now = session.usage
    input_tokens = now.input - before.input
    output_tokens = now.output - before.output
    cache_read = now.cache_read - before.cache_read
    cache_write = now.cache_write - before.cache_write
    return Usage(
        total_tokens=input_tokens + output_tokens + cache_read + cache_write,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cached_read_tokens=cache_read,
        cached_write_tokens=cache_write,
    )
