"""Session events → widget updates: one ``match``, no agent logic.

Events arrive on the app's own event loop (the session runs inside it), so the handler
touches widgets directly. It must stay cheap: text deltas arrive up to 20 times a second
per block, and every call here delays the agent loop by that much.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from picode.agent.events import (
    AgentEnd,
    AgentStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnStart,
)
from picode.agent.tool import ToolResult
from picode.ai.events import (
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from picode.ai.types import AssistantMessage, Message, ToolCall, ToolResultMessage, UserMessage
from picode.session.events import (
    AutoRetryEnd,
    AutoRetryStart,
    CompactionEnd,
    CompactionStart,
    CustomEvent,
    EditGuardAbort,
    McpServersChanged,
    ModeChanged,
    ModelChanged,
    Notice,
    QueueChanged,
    RuleTriggered,
    SaveFailed,
    SessionNameChanged,
    SessionSwitched,
    ThinkingLevelChanged,
    TodosChanged,
)
from picode.session.mcp import McpServerStatus
from picode.tui import gc_pause
from picode.tui.controllers.retries import RetryTracker, resumed_retries
from picode.tui.controllers.shell import resumed_shell_view
from picode.tui.widgets.messages import (
    AssistantMessageView,
    UserMessageView,
    completed_assistant_view,
)
from picode.tui.widgets.notice import NoticeLevel, NoticeView
from picode.tui.widgets.tool_call import ToolCallView

if TYPE_CHECKING:
    from picode.ai.models import Model
    from picode.session.events import AnySessionEvent
    from picode.tui.widgets.queue import QueueView
    from picode.tui.widgets.status import StatusLine
    from picode.tui.widgets.todos import TodoPanel
    from picode.tui.widgets.transcript import IndexedEntry, Transcript

INTERRUPTED_TEXT = "Interrupted"
#: A resumed tool call whose result never reached the file.
UNFINISHED_CALL_TEXT = "picode stopped before this call finished: it has no result"
#: How long after a run ends the garbage start-up froze is collected (``gc_pause``).
SWEEP_AFTER_S = 2.0
#: What a reply cut at the output limit says, and what the person can do about it.
LENGTH_TEXT = (
    "The reply stopped at the model's output limit ({limit:,} tokens). Type “continue” to "
    "have it go on, or raise max_tokens for this model ([[providers.{provider}.models]] "
    "in config.toml)."
)


class SessionView(Protocol):
    @property
    def display_count(self) -> int:
        """How many messages the session's display list holds: a new entry's index."""
        ...

    @property
    def model(self) -> Model: ...

    @property
    def context_tokens(self) -> int:
        """The context's estimated size now (after a compaction: what is left)."""
        ...


class RouterHost(Protocol):
    """The widgets events change, and what else in the app hears of them."""

    @property
    def transcript(self) -> Transcript: ...

    @property
    def status(self) -> StatusLine: ...

    @property
    def queue(self) -> QueueView: ...

    @property
    def todo_panel(self) -> TodoPanel: ...

    @property
    def session(self) -> SessionView | None: ...

    def refresh_footer(self) -> None: ...

    def queued_messages(self) -> tuple[list[str], list[str]]: ...

    def session_switched(self, reason: str) -> None:
        """Render the new session (the transcript was just cleared)."""
        ...


class EventRouter:
    def __init__(self, host: RouterHost) -> None:
        self.host = host
        self.transcript = host.transcript
        self.status = host.status
        self.queue = host.queue
        self.current: AssistantMessageView | None = None
        self.tools: dict[str, ToolCallView] = {}
        self.user_messages = 0
        #: Notes about the message being sent (an ``@file`` left out): shown under it.
        self._notes_for_next: list[tuple[str, NoticeLevel]] = []
        self.retries = RetryTracker(self.transcript)
        self._interrupted = False
        #: The last state reported per MCP server: a failure is told once, not per event.
        self._mcp_states: dict[str, str] = {}

    def mark_interrupted(self) -> None:
        """The person pressed Esc: the marker and the idle status show at once.

        The run winds down a few milliseconds later; waiting for its ``AgentEnd`` would add
        a frame or two to what the person sees, and nothing it sends changes the marker.
        """
        with self.transcript.app.batch_update():
            self.status.stop_working()
            self._show_interrupted()

    def _sweep_when_idle(self) -> None:
        if not self.status.is_working:  # else the next run's end asks again
            gc_pause.sweep_frozen_garbage()

    def handle(self, event: AnySessionEvent) -> None:
        match event:
            case AgentStart():
                self._interrupted = False
                self.status.start_working()
            case AgentEnd():
                with self.transcript.app.batch_update():
                    self.status.stop_working()
                    self.current = None
                    self.tools.clear()
                    self.host.refresh_footer()
                if gc_pause.sweep_owed():
                    # A full pass (70-140 ms): not as the reply lands, when the person may
                    # type at once, but once it has been read a moment and nothing runs.
                    self.transcript.app.set_timer(SWEEP_AFTER_S, self._sweep_when_idle)
            case MessageStart(message=UserMessage() as message):
                self.user_messages += 1
                self.transcript.add(UserMessageView.of(message), self._next_index())
                self.show_notes_for_message()
                if self.queue.display:
                    # A queued message was just delivered; the session does not announce it.
                    self.queue.show(*self.host.queued_messages())
            case MessageStart(message=AssistantMessage()):
                self.current = self._new_assistant_view()
                self.transcript.add(self.current, self._next_index())
            case MessageUpdate(event=TextStartEvent(content_index=index)):
                self._assistant().text_start(index)
            case MessageUpdate(event=TextDeltaEvent(content_index=index, delta=delta)):
                self._assistant().text_delta(index, delta)
            case MessageUpdate(event=TextEndEvent(content_index=index, content=content)):
                self._assistant().text_end(index, content)
            case MessageUpdate(event=ThinkingStartEvent(content_index=index)):
                self._assistant().thinking_start(index)
            case MessageUpdate(event=ThinkingDeltaEvent(content_index=index, delta=delta)):
                self._assistant().thinking_delta(index, delta)
            case MessageUpdate(event=ThinkingEndEvent(content_index=index, content=content)):
                self._assistant().thinking_end(index, content)
            case MessageUpdate(event=ToolCallStartEvent(content_index=index, partial=partial)):
                call = partial.content[index]
                if isinstance(call, ToolCall):
                    self.tools[call.id] = self._assistant().tool_call_start(index, call)
            case MessageUpdate(event=ToolCallDeltaEvent(content_index=index, partial=partial)):
                call = partial.content[index]
                if isinstance(call, ToolCall):
                    self.tools[call.id] = self._assistant().tool_call_update(index, call)
            case MessageUpdate(event=ToolCallEndEvent(content_index=index, tool_call=call)):
                self.tools[call.id] = self._assistant().tool_call_update(index, call)
            case MessageUpdate():
                pass  # start / done / error: MessageStart and MessageEnd say it better
            case MessageEnd(message=AssistantMessage() as message):
                view = self._assistant()
                view.finish(message)
                for call_view in view.tool_views():
                    self.tools[call_view.call_id] = call_view
                self.retries.reply_ended(view, message.stop_reason == "error")
                if message.stop_reason == "length":
                    self.notice(self._length_text(message), "warning")
                self.host.refresh_footer()
            case MessageEnd():
                pass  # user messages show at their start; tool results via tool events
            case ToolExecutionStart(tool_call_id=call_id, args=args):
                if (running := self.tools.get(call_id)) is not None:
                    running.set_running(args)
            case ToolExecutionUpdate(tool_call_id=call_id, tool_name=name, partial=partial):
                if (running := self.tools.get(call_id)) is not None:
                    running.set_partial(partial)
                if name == "task":  # a subagent's usage counts in the footer as it grows
                    self.host.refresh_footer()
            case ToolExecutionEnd(tool_call_id=call_id, result=result, is_error=is_error):
                if (running := self.tools.get(call_id)) is not None:
                    running.set_result(result, is_error)
            case TurnStart() | TurnEnd():
                pass
            case AutoRetryStart(attempt=attempt, max_attempts=most, delay_ms=delay):
                self.status.show_retry(attempt, most, delay)
                self.retries.started(event)
            case AutoRetryEnd():
                self.status.end_retry()
                self.retries.ended(event, self._interrupted)
            case CompactionStart():
                self._interrupted = False
                self.status.set_notice("Compacting context…")
            case CompactionEnd(aborted=aborted, error=error, tokens_before=tokens):
                self.status.set_notice(None)
                if aborted:
                    self._show_interrupted()
                elif error:
                    self.notice(f"Compaction failed: {error}", "error")
                else:
                    # Before and after, both the context's size: the count before is not
                    # what was summarised (the kept tail and the system prompt are in it).
                    session = self.host.session
                    after = f" to ~{session.context_tokens:,}" if session is not None else ""
                    self.notice(f"Context compacted from ~{tokens:,} tokens{after}", "info")
                self.host.refresh_footer()
            case RuleTriggered(rule=rule, scope=scope):
                self.notice(
                    f"Rule '{rule}' matched the {scope} stream; retrying with it", "warning"
                )
            case EditGuardAbort(path=path, reason=reason):
                self.notice(f"Edit of {path} stopped early: {reason}", "warning")
            case SessionSwitched(reason=reason):
                self.transcript.clear()
                self.retries.reset()
                self.current = None
                self.tools.clear()
                self.host.session_switched(reason)
                self.host.refresh_footer()
            case ModelChanged() | ThinkingLevelChanged() | SessionNameChanged() | ModeChanged():
                self.host.refresh_footer()
            case QueueChanged(steering=steering, follow_ups=follow_ups):
                self.queue.show(steering, follow_ups)
            case Notice(level=level, text=text, source=source):
                self.notice(f"{source}: {text}" if source else text, level)
                if isinstance(event, SaveFailed):
                    self.host.refresh_footer()  # the footer keeps the warning in view
            case McpServersChanged(servers=servers):
                self._mcp_changed(servers)
            case TodosChanged(todos=todos):
                self.host.todo_panel.show(todos)
            case CustomEvent():
                pass

    # --- helpers ----------------------------------------------------------------------

    def _mcp_changed(self, servers: Sequence[McpServerStatus]) -> None:
        for status in servers:
            before = self._mcp_states.get(status.name)
            self._mcp_states[status.name] = status.state
            warn = ("failed", "timed_out", "disconnected", "needs_login")
            if status.state in warn and before != status.state:
                self.notice(f"MCP server '{status.name}' {status.summary} (/mcp)", "warning")

    def _show_interrupted(self) -> None:
        """One marker per interrupted run, however many ways the run reports the abort."""
        if not self._interrupted:
            self._interrupted = True
            self.notice(INTERRUPTED_TEXT, "interrupted")

    def _length_text(self, message: AssistantMessage) -> str:
        session = self.host.session
        limit = session.model.max_tokens if session is not None else 0
        return LENGTH_TEXT.format(limit=limit, provider=message.provider)

    def note_for_next_message(self, text: str, level: NoticeLevel) -> None:
        """Said under the next user message shown (the one it is about)."""
        self._notes_for_next.append((text, level))

    def show_notes_for_message(self) -> None:
        """Show the held notes now: under the message just added, or because none comes."""
        notes, self._notes_for_next = self._notes_for_next, []
        for text, level in notes:
            self.notice(text, level)

    def notice(self, text: str, level: NoticeLevel = "info") -> None:
        self.transcript.add(NoticeView(text, level))

    def _next_index(self) -> int | None:
        session = self.host.session
        return session.display_count if session is not None else None

    def show_history(
        self, messages: Sequence[Message], hidden_before: int = 0, start: int | None = None
    ) -> None:
        """Render finished messages (a resumed session) without the streaming machinery.

        Only the newest entries the transcript keeps are built; older ones are counted.
        ``start``: the display index of ``messages[0]`` (default: ``hidden_before``).
        """
        first = hidden_before if start is None else start
        kept, _ = _newest_entries(messages, self.transcript.max_entries)
        start_of_kept = first + len(messages) - len(kept)
        self.transcript.add_all(self.build_entries(kept, start_of_kept), start_of_kept)

    def build_entries(self, messages: Sequence[Message], start: int) -> list[IndexedEntry]:
        """Widgets for finished messages, each with its display index (``start`` first),
        looking as they did live: retries as their outcome line, notices where they were."""
        from picode.session.store import RECOVERED_TEXT, read_shell_run

        entries: list[IndexedEntry] = []
        calls: dict[str, ToolCallView] = {}
        skip_to = 0
        for offset, message in enumerate(messages):
            if offset < skip_to:
                continue
            match message:
                case UserMessage() if (ran := read_shell_run(message.text)) is not None:
                    # A ``!cmd`` whose output went to the model: shown as it was run.
                    view = resumed_shell_view(*ran, expanded=self.transcript.tools_expanded)
                    entries.append((view, start + offset))
                case UserMessage():
                    entries.append((UserMessageView.of(message), start + offset))
                case AssistantMessage(stop_reason="error") if (
                    run := resumed_retries(messages, offset)
                ).line is not None:
                    skip_to = run.end
                    if run.kept is not None:
                        kept = self._finished_view(messages[run.kept], calls, superseded=True)
                        entries.append((kept, start + run.kept))
                    entries.append((NoticeView(*run.line), None))
                case AssistantMessage():
                    entries.append((self._finished_view(message, calls), start + offset))
                    if message.stop_reason == "aborted" and message.error_message == RECOVERED_TEXT:
                        # Kept from its draft: picode stopped while it streamed.
                        entries.append((NoticeView(RECOVERED_TEXT, "warning"), None))
                    elif message.stop_reason == "aborted":
                        # As it looked live: a resumed interrupted turn says so.
                        entries.append((NoticeView(INTERRUPTED_TEXT, "interrupted"), None))
                    elif message.stop_reason == "length":
                        entries.append((NoticeView(self._length_text(message), "warning"), None))
                case ToolResultMessage(tool_call_id=call_id):
                    if (call_view := calls.get(call_id)) is not None:
                        call_view.set_result(
                            ToolResult(message.content, message.details, message.is_error),
                            message.is_error,
                        )
        for call_view in calls.values():
            if not call_view.is_finished:
                # History is finished messages: a call without a result is one picode was
                # running when it stopped (a crash, kill -9), not one still streaming.
                call_view.set_result(ToolResult.text(UNFINISHED_CALL_TEXT), True)
        return entries

    def _finished_view(
        self, message: Message, calls: dict[str, ToolCallView], *, superseded: bool = False
    ) -> AssistantMessageView:
        assert isinstance(message, AssistantMessage)
        view = completed_assistant_view(
            message,
            thinking_collapsed=self.transcript.thinking_collapsed,
            tools_expanded=self.transcript.tools_expanded,
            superseded=superseded,
        )
        calls.update((v.call_id, v) for v in view.tool_views())
        return view

    def _new_assistant_view(self) -> AssistantMessageView:
        return AssistantMessageView(
            thinking_collapsed=self.transcript.thinking_collapsed,
            tools_expanded=self.transcript.tools_expanded,
        )

    def _assistant(self) -> AssistantMessageView:
        # An update without a start (a listener subscribed mid-message) still renders.
        if self.current is None:
            self.current = self._new_assistant_view()
            self.transcript.add(self.current)
        return self.current


def _newest_entries(messages: Sequence[Message], limit: int) -> tuple[Sequence[Message], int]:
    """The tail of ``messages`` holding at most ``limit`` entries (tool results ride along
    with their call), and how many entries were left out."""
    entries = 0
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], ToolResultMessage):
            continue
        entries += 1
        if entries > limit:
            skipped = sum(1 for m in messages[: index + 1] if not isinstance(m, ToolResultMessage))
            return messages[index + 1 :], skipped
    return messages, 0
