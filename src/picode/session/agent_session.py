"""AgentSession: the Agent plus everything that makes a conversation durable (docs/sessions.md).

It persists every finished message, retries transient failures, compacts the context,
enforces stream rules and the streaming edit guard, runs extension hooks and approvals,
and exposes one ``subscribe`` stream of agent and session events to front ends. It knows
nothing of Textual: the TUI and the headless modes are both just listeners plus callers.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from picode.agent.agent import Agent, AgentBusyError
from picode.agent.events import (
    AgentEnd,
    AgentEvent,
    AgentStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    TurnEnd,
    TurnStart,
)
from picode.agent.file_blocks import split_attachments
from picode.agent.tool import AgentTool, ToolResult
from picode.ai.abort import AbortController
from picode.ai.models import (
    Model,
)
from picode.ai.options import StreamOptions
from picode.ai.stream import prepare_provider
from picode.ai.text_repair import repair_text
from picode.ai.types import (
    AssistantMessage,
    Message,
    TextContent,
    ToolCall,
    UserContent,
    UserMessage,
)
from picode.session.checkpointing import CheckpointKeeper
from picode.session.deferred_start import DeferredStart
from picode.session.event_hub import EventHub, Listener
from picode.session.events import (
    AnySessionEvent,
    McpServersChanged,
    Notice,
    QueueChanged,
    SaveFailed,
)
from picode.session.extensions.loader import ExtensionHost
from picode.session.hooks.hooks import HookRunner
from picode.session.mcp.controls import McpControls
from picode.session.models.controls import ModelControls
from picode.session.models.credentials import Credentials
from picode.session.options import SessionOptions
from picode.session.paths import project_dir
from picode.session.prompts.controls import PromptControls
from picode.session.recovery.planner import RecoveryPlanner, RequestSeams
from picode.session.recovery.rules import load_rules
from picode.session.rewinding import RewindControls
from picode.session.safety.approval import offer_escalation, standard_gate
from picode.session.safety.controls import SafetyControls
from picode.session.safety.plan_mode import PlanControls, PlanState
from picode.session.safety.secrets import redact_tool_result
from picode.session.seams import SessionSeams
from picode.session.skills import open_skills
from picode.session.store.conversation import StoredConversation
from picode.session.store.recorder import SessionRecorder
from picode.session.subagents.tool import offer_task_tool
from picode.session.switching import SessionSwitching, saved_choices
from picode.session.system_prompt import session_system_prompt
from picode.session.todos import TodoControls, todo_text, todos_from
from picode.session.usage import SessionUsage
from picode.session.view import SessionView

if TYPE_CHECKING:
    from picode.session.mcp.manager import McpManager

log = logging.getLogger(__name__)

__all__ = ["AgentBusyError", "AgentSession", "SessionOptions", "SessionUsage"]


class AgentSession(
    SessionView,
    ModelControls,
    PlanControls,
    SafetyControls,
    StoredConversation,
    TodoControls,  # before SessionSwitching, which calls it
    SessionSwitching,
    RewindControls,
    PromptControls,
    McpControls,
):
    """Use ``await AgentSession.open(options)``; every part exists once constructed."""

    def __init__(self, options: SessionOptions) -> None:
        self._options = options
        self._settings = options.settings
        self._registry = options.registry
        self._credentials = Credentials(options.registry, options.paths)
        self._credentials.remember_all()
        self._events = EventHub()
        self._seams = SessionSeams(
            emit=self._emit,
            emit_soon=self._emit_soon,
            notify=self.notify,
            has_queued=lambda: self._has_queued,
            wait_retry=self._wait_retry,
            spend=self._spend,
            send_message=self._send_message,
            append_entry=self._append_entry,
            todo_list=lambda: todo_text(self._todos),
        )
        self._save_error: str | None = None
        self._recorder = SessionRecorder(
            options.paths, options.cwd, self.notify, subagent_of=options.subagent_of
        )
        self._keeper = CheckpointKeeper(options, self._settings, self._recorder, self.notify)
        self._deferred = DeferredStart()
        self._extensions = ExtensionHost(
            cwd=options.cwd,
            user_dir=options.paths.extensions_dir,
            project_dir=project_dir(options.cwd) / "extensions"
            if options.project_trusted
            else None,
            use_entry_points=options.load_extensions,
            sink=self._seams,
        )
        self._hooks = HookRunner(self._settings.hooks, options.cwd, self.notify, self._hook_fields)
        self._approval = options.approval_gate or standard_gate(
            options.approval or options.settings.approval,
            self._notifying(options.approver) if options.approver else None,
            options.paths,
            options.cwd,
            allow_commands=options.settings.allow_commands,
            project_trusted=options.project_trusted,
            notify=lambda text: self.notify(text, "warning", "approval"),
        )
        self._plan = PlanState(on=options.plan)
        self._run_lock = asyncio.Lock()
        self._abort_retry: AbortController | None = None
        self._running = False
        self._closed = False
        self._mcp: McpManager | None = None
        self._load_templates(options.paths.config_dir, options.cwd)
        for problem in self._extensions.load() if options.load_extensions else []:
            self.notify(problem, "warning", "extensions")
        tools = [*self._extensions.merged_tools(options.tools, self.notify)]
        tools += self._plan_tools(options)
        offer_escalation(tools, self._approval)
        tools = offer_task_tool(tools, options, self._approval, self._seams, self, self.notify)
        self._skills = open_skills(options.cwd, options.paths.config_dir, self.notify)
        restored = self._recorder.open(options.session)
        # A resumed session keeps its model and thinking level unless the command line
        # chose them explicitly.
        model, thinking = saved_choices(
            self._registry,
            restored,
            options.model,
            options.thinking,
            keep_model=options.model_explicit,
            keep_thinking=options.thinking_explicit,
        )
        self._agent = Agent(
            model=model,
            system_prompt=self._system_prompt(tools),
            tools=tools,
            thinking=thinking,
            messages=restored.messages,
            stream_fn=options.stream_fn,
            stream_options=self._stream_options,
            before_tool_call=self._gate_tool_call,
            after_tool_call=self._after_tool_call,
            steering_mode=self._settings.steering_mode,
            follow_up_mode=self._settings.follow_up_mode,
            max_parallel=self._settings.tools.max_parallel,
            should_stop=self._over_limit,
        )
        project_rules = project_dir(self.cwd) / "rules" if options.project_trusted else None
        rules, rule_problems = load_rules(project_rules, options.paths.rules_dir)
        for problem in rule_problems:
            self.notify(problem, "warning", "rules")
        self._recovery = RecoveryPlanner(
            self._agent,
            self._seams,
            self._recorder,
            self._settings,
            RequestSeams(options.stream_fn, self._stream_options),
            rules,
            restored.fired_rules,
        )
        self._agent.subscribe(self._on_agent_event)
        self._agent.subscribe(self._on_todo_event)  # after: front ends see the tool end first
        self._todos = todos_from(restored.todos) or []
        self._usage = restored.usage
        self._recorder.set_current(model, thinking)
        #: The built-in and extension tools; MCP tools are added to these as servers connect.
        self._own_tools = list(tools)

    # --- construction ------------------------------------------------------------------

    @classmethod
    async def open(cls, options: SessionOptions, *, defer: bool = False) -> AgentSession:
        """Open the session file, start connecting MCP servers in the background and tell
        extensions the session started (``defer``: MCP and warm-up wait, deferred_start.py)."""
        session = cls(options)
        session._deferred.start(session._agent, [session._start_mcp, session._keeper.warm], defer)
        await session._extensions.emit("session_start", session)
        await session._session_start_hooks("resume" if session.messages else "startup")
        return session

    def _mcp_changed(self) -> None:
        if self._mcp is not None:
            tools, self._approval.gated_as_all = self._mcp.offer(self._own_tools)
            self._agent.set_tools(tools)
            self._emit_soon(McpServersChanged(self._mcp.statuses()))

    def _system_prompt(self, tools: Sequence[AgentTool]) -> str:
        prompt, problems = session_system_prompt(self._options, tools, self._skills.skills)
        for problem in problems:
            self.notify(problem, "warning", "context")
        return prompt

    async def prepare_provider(self) -> None:
        """Get the current model's provider ready (SDK imported, client built) before the
        first request needs it; a failure is left for that request to report."""
        model = self.model
        try:
            await prepare_provider(model, self._stream_options(model))
        except Exception:
            log.debug("preparing %s failed", model.api, exc_info=True)
        self._deferred.provider_ready(running=self._running)

    def _stream_options(self, model: Model) -> StreamOptions:
        return StreamOptions(
            api_key=self._credentials.api_key(model),
            base_url=self._credentials.base_url(model),
            headers=dict(model.headers),
            session_id=self.session_id,
        )

    # --- commands that need no run ---------------------------------------------------

    async def run_extension_command(self, name: str, argument: str) -> bool:
        """Run ``/name argument``; False when no extension registered ``name``."""
        return await self._extensions.run_command(name, argument)

    async def wait_for_mcp(self) -> None:
        """Until every MCP server has connected or failed, each within its ``timeout_s``
        (headless runs wait so that the model sees the tools from the first prompt)."""
        if self._mcp is not None:
            await self._mcp.wait_settled()

    def add_note(self, text: str) -> None:
        """Add ``text`` to the context as the person's message without running the model
        (``!cmd`` output); while picode works it waits as a follow-up. Raises ``OSError``
        when it cannot be saved (it stays in the context). Masked like a tool's result.
        A session holding only such notes is not written (it would clutter the picker)."""
        text = redact_tool_result(ToolResult.text(text), shapes=self._shapes).text_content
        if self._running:
            self.follow_up(text)
            return
        message = UserMessage(text)
        self._agent.append_message(message)
        self._recorder.record_note(message)

    def _spend(self, reply: AssistantMessage | None) -> dict[str, Any]:
        """Count a request the session made of its own (a compaction's summary) in its
        usage; the running total, which the compaction entry keeps for a resume."""
        if reply is not None:
            self._usage.add(reply)
        return self._usage.as_record()

    # --- events ------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        return self._events.subscribe(listener)

    async def _emit(self, event: AnySessionEvent) -> None:
        await self._events.emit(event)

    def _emit_soon(self, event: AnySessionEvent) -> None:
        """Emit from synchronous code; listeners still run in order on the loop."""
        self._events.emit_soon(event)

    async def _on_agent_event(self, event: AgentEvent) -> None:
        match event:
            case MessageUpdate(message=partial):
                self._recovery.on_update(event)
                self._recorder.keep_draft(partial)
            case MessageStart(message=message):
                if isinstance(message, AssistantMessage):
                    self._recovery.on_assistant_start()
                elif isinstance(message, UserMessage):
                    # A queued message may just have been delivered: the queues changed.
                    self._queue_changed()
                    self._keeper.before_message()
                await self._extensions.emit("message_start", message)
            case MessageEnd(message=message):
                if self._recovery.keep_message(message):
                    self._record(message)
                    if isinstance(message, AssistantMessage):
                        self._usage.add(message)
                # In the file now, or dropped for a retry: the reply's draft goes either way.
                self._recorder.drop_draft()
                await self._extensions.emit("message_end", message)
            case AgentStart() | AgentEnd() | TurnStart() | TurnEnd():
                await self._extensions.emit(event.type, event)
        await self._emit(event)

    def _record(self, message: Message) -> None:
        try:
            entry_id = self._recorder.record_message(message)
            if isinstance(message, UserMessage):
                self._keeper.mark(entry_id)
        except OSError as exc:
            # The conversation goes on in memory; the person must know it is not saved,
            # and a headless run must not exit 0 (see save_error).
            first = self._save_error is None
            self._save_error = str(exc)
            if first:
                self._emit_soon(SaveFailed(text=f"Could not save the session: {exc}"))

    # --- commands ----------------------------------------------------------------------

    async def prompt(self, text: str, attachments: Sequence[UserContent] = ()) -> None:
        """Run a prompt until the agent is idle (retries and recovery included).

        ``attachments`` follow the text: images, or the files of ``attach_mentions``."""
        if self._running:
            raise AgentBusyError(
                "picode is still working; steer or queue a follow-up, or abort first"
            )
        text, attachments = await self._mcp_message(text, attachments)
        text, template = self._expand_template(text)
        before = await self._template_model(template)
        try:
            self._credentials.require(self.model)
            text = repair_text(await self._extensions.transform_input(repair_text(text)))
            if (hooked := await self._prompt_hooks(text)) is None:
                return
            message = _user_message(hooked, [*attachments, *self._mode_notes()])
            await self._run(lambda: self._agent.prompt(message))
        finally:
            self._restore_model(before)
        # What the agent left is checkpointed before the caller goes on (a hand edit made
        # after this returns is one, not the agent's).
        await self._keeper.settled()

    async def _run(self, start: Callable[[], Awaitable[None]]) -> None:
        async with self._run_lock:
            self._running = True
            try:
                await self._recovery.before_run()
                await start()
                await self._recovery.after_run()
                # Typed after the agent's last turn but before the run was over (while it
                # ended, retried or compacted): without this it would wait for the next run.
                # A Stop hook may send the agent back to work (its reason is queued).
                while not self._recovery.cancelled and (
                    self._has_queued or await self._stop_hooks()
                ):
                    await self._agent.continue_()
                    await self._recovery.after_run()
            finally:
                self._running = False
                self._abort_retry = None
                # Out of the run: Esc and the next message never wait for it.
                self._keeper.after_run()

    async def _wait_retry(self, delay_ms: int) -> bool:
        """Sleep before a retry; False when aborted in the meantime."""
        controller = self._abort_retry = AbortController()
        try:
            await asyncio.wait_for(controller.signal.wait(), delay_ms / 1000)
        except TimeoutError:
            return True
        finally:
            self._abort_retry = None
        return False

    def steer(self, text: str, attachments: Sequence[UserContent] = ()) -> None:
        text = self._expand_template(text)[0]  # queued: the template's model does not apply
        self._agent.steer(_user_message(repair_text(text), attachments))
        self._queue_changed()
        self._supersede_retry()

    def follow_up(self, text: str, attachments: Sequence[UserContent] = ()) -> None:
        text = self._expand_template(text)[0]
        self._agent.follow_up(_user_message(repair_text(text), attachments))
        self._queue_changed()
        self._supersede_retry()

    def _supersede_retry(self) -> None:
        """A message typed while a retry waits goes out at once, in place of the retry:
        the person has moved on, and waiting out the back-off would only delay them."""
        if self._abort_retry is not None:
            self._abort_retry.abort("message")

    def clear_queues(self) -> list[str]:
        """The queued messages as typed (attached files come back as their mentions)."""
        steering, follow_ups = self._agent.clear_queues()
        self._queue_changed()
        return [split_attachments(message)[0] for message in [*steering, *follow_ups]]

    @property
    def _has_queued(self) -> bool:
        """Steering or follow-up messages wait to be delivered."""
        return bool(self._agent.queued_steering or self._agent.queued_follow_ups)

    def _queue_changed(self) -> None:
        self._emit_soon(QueueChanged(self.queued_steering, self.queued_follow_ups))

    def abort(self) -> None:
        """Stop everything in flight: the stream, tools and a pending retry."""
        self._recovery.cancel()
        if self._abort_retry is not None:
            self._abort_retry.abort("user")
        self._agent.abort("user")

    async def wait_for_idle(self) -> None:
        while self._running or self._agent.is_running:
            await self._agent.wait_for_idle()
            await asyncio.sleep(0)
            if self._running:
                async with self._run_lock:
                    pass

    async def compact(
        self, instructions: str | None = None, keep_recent_tokens: int | None = None
    ) -> None:
        """Summarise older messages now; ``keep_recent_tokens`` overrides the setting's
        verbatim tail for this once."""
        if self._running:
            raise AgentBusyError("cannot compact while picode is working; abort first")
        self._running = True
        try:
            await self._recovery.compact("manual", instructions, keep_recent_tokens)
        finally:
            self._running = False

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._running:
            self.abort()
            try:
                await asyncio.wait_for(self.wait_for_idle(), 5)
            except TimeoutError:
                log.warning("session did not settle within 5 s of closing")
        await self._extensions.emit("session_end", self)
        if self._mcp is not None:
            await self._mcp.close()
        await self._keeper.done()
        self._recorder.close()

    async def _gate_tool_call(self, call: ToolCall, args: Any) -> str | None:
        # The files as they were before the person's message are saved before a tool runs.
        await self._keeper.before_tools()
        return await self._before_tool_call(call, args)

    # --- hooks and extension sink --------------------------------------------------------

    def _send_message(self, text: str, deliver_as: str = "follow_up") -> None:
        if deliver_as == "steer" and self._running:
            self.steer(text)
        elif self._running:
            self.follow_up(text)
        else:
            self._events.spawn(self.prompt(text))

    def _append_entry(self, custom_type: str, data: Any) -> None:
        self._recorder.record_custom(custom_type, data)

    def notify(self, text: str, level: str = "info", source: str | None = None) -> None:
        """A notice for the person (extensions call it too); an unknown level is info."""
        lvl: Any = level if level in ("info", "warning", "error") else "info"
        self._emit_soon(Notice(lvl, text, source))


def _user_message(text: str, attachments: Sequence[UserContent]) -> UserMessage:
    return UserMessage([TextContent(text), *attachments] if attachments else text)
