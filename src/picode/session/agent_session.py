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
from pathlib import Path
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
    ThinkingLevel,
    next_thinking_level,
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
from picode.session.event_hub import EventHub, Listener
from picode.session.events import (
    AnySessionEvent,
    McpServersChanged,
    ModelChanged,
    Notice,
    QueueChanged,
    SaveFailed,
    SessionNameChanged,
    ThinkingLevelChanged,
)
from picode.session.extensions.loader import Command, ExtensionHost
from picode.session.mcp.status import McpServerStatus
from picode.session.models.choice import ModelChoice, choose_model
from picode.session.models.credentials import Credentials
from picode.session.options import SessionOptions
from picode.session.paths import project_dir
from picode.session.recovery.planner import RecoveryPlanner, RequestSeams
from picode.session.recovery.rules import load_rules
from picode.session.safety.approval import (
    ApprovalGate,
    ApprovalPolicy,
    Approver,
    ProtectedPaths,
    offer_escalation,
)
from picode.session.safety.secrets import redact_tool_result
from picode.session.store.recorder import Restored, SessionRecorder
from picode.session.store.sessions import SessionStore
from picode.session.switching import saved_choices, switch_to
from picode.session.system_prompt import build_system_prompt, first_line
from picode.session.usage import SessionUsage

if TYPE_CHECKING:
    from picode.session.mcp.manager import McpManager

log = logging.getLogger(__name__)

__all__ = ["AgentBusyError", "AgentSession", "SessionOptions", "SessionUsage"]


class AgentSession:
    """Use ``await AgentSession.open(options)``; every part exists once constructed."""

    def __init__(self, options: SessionOptions) -> None:
        self.options = options
        self.cwd = options.cwd
        self.settings = options.settings
        self.registry = options.registry
        self.credentials = Credentials(options.registry, options.paths)
        self.credentials.remember_all()
        self._events = EventHub()
        #: Why the last write to the session file failed; None while everything is saved.
        self.save_error: str | None = None
        self.recorder = SessionRecorder(options.paths, options.cwd, self._notice)
        self.extensions = ExtensionHost(
            cwd=options.cwd,
            user_dir=options.paths.extensions_dir,
            project_dir=project_dir(options.cwd) / "extensions"
            if options.project_trusted
            else None,
            use_entry_points=options.load_extensions,
            sink=self,
        )
        self.approval = ApprovalGate(
            options.approval or options.settings.approval,
            options.approver,
            ProtectedPaths.standard(options.paths, options.cwd),
        )
        self._run_lock = asyncio.Lock()
        self._abort_retry: AbortController | None = None
        self._running = False
        self._closed = False
        self._mcp: McpManager | None = None
        for problem in self.extensions.load() if options.load_extensions else []:
            self._notice(problem, "warning", "extensions")
        tools = self._compose_tools(options.tools)
        offer_escalation(tools, self.approval)
        restored = self.recorder.open(options.session)
        # A resumed session keeps its model and thinking level unless the command line
        # chose them explicitly.
        model, thinking = saved_choices(
            self.registry,
            restored,
            options.model,
            options.thinking,
            keep_model=options.model_explicit,
            keep_thinking=options.thinking_explicit,
        )
        self.agent = Agent(
            model=model,
            system_prompt=self._system_prompt(tools),
            tools=tools,
            thinking=thinking,
            messages=restored.messages,
            stream_fn=options.stream_fn,
            stream_options=self._stream_options,
            before_tool_call=self._before_tool_call,
            after_tool_call=self._after_tool_call,
            steering_mode=self.settings.steering_mode,
            follow_up_mode=self.settings.follow_up_mode,
            max_parallel=self.settings.tools.max_parallel,
        )
        project_rules = project_dir(self.cwd) / "rules" if options.project_trusted else None
        rules, rule_problems = load_rules(project_rules, options.paths.rules_dir)
        for problem in rule_problems:
            self._notice(problem, "warning", "rules")
        self.recovery = RecoveryPlanner(
            self.agent,
            self,
            self.recorder,
            self.settings,
            RequestSeams(options.stream_fn, self._stream_options),
            rules,
            restored.fired_rules,
        )
        self.agent.subscribe(self._on_agent_event)
        self.usage = restored.usage
        self.recorder.set_current(model, thinking)
        #: The built-in and extension tools; MCP tools are added to these as servers connect.
        self._own_tools = list(tools)

    # --- construction ------------------------------------------------------------------

    @classmethod
    async def open(cls, options: SessionOptions) -> AgentSession:
        """Open the session file, start connecting MCP servers in the background and tell
        extensions the session started."""
        session = cls(options)
        session._start_mcp()
        await session.extensions.emit("session_start", session)
        return session

    def _compose_tools(self, given: Sequence[AgentTool]) -> list[AgentTool]:
        """The launcher's tools, then extension tools whose names are still free."""
        tools = list(given)
        taken = {tool.name for tool in tools}
        for tool in self.extensions.tools:
            if tool.name in taken:
                self._notice(
                    f"extension tool '{tool.name}' ignored: a tool of that name exists",
                    "warning",
                    "extensions",
                )
                continue
            taken.add(tool.name)
            tools.append(tool)
        return tools

    def _start_mcp(self) -> None:
        servers = self.settings.mcp.servers
        if not servers:
            return
        # The SDK is imported only now: a session without servers never loads it.
        from picode.session.mcp.manager import McpManager

        self._mcp = McpManager(servers, self.cwd, self._mcp_changed)
        self._mcp.start()

    def _mcp_changed(self) -> None:
        if self._mcp is not None:
            tools, self.approval.gated_as_all = self._mcp.offer(self._own_tools)
            self.agent.set_tools(tools)
            self.emit_soon(McpServersChanged(self._mcp.statuses()))

    def _system_prompt(self, tools: Sequence[AgentTool]) -> str:
        summaries = [(tool.name, first_line(tool.description)) for tool in tools]
        problems: list[str] = []
        prompt = build_system_prompt(
            cwd=self.cwd,
            config_dir=self.options.paths.config_dir,
            tools=summaries,
            override=self.options.system_prompt,
            append=self.options.append_system_prompt,
            project_trusted=self.options.project_trusted,
            problems=problems,
        )
        for problem in problems:
            self._notice(problem, "warning", "context")
        return prompt

    async def prepare_provider(self) -> None:
        """Get the current model's provider ready (SDK imported, client built) before the
        first request needs it; a failure is left for that request to report."""
        model = self.model
        try:
            await prepare_provider(model, self._stream_options(model))
        except Exception:
            log.debug("preparing %s failed", model.api, exc_info=True)

    def _stream_options(self, model: Model) -> StreamOptions:
        return StreamOptions(
            api_key=self.credentials.api_key(model),
            base_url=self.credentials.base_url(model),
            headers=dict(model.headers),
            session_id=self.session_id,
        )

    # --- state -------------------------------------------------------------------------

    @property
    def model(self) -> Model:
        return self.agent.state.model

    @property
    def thinking(self) -> ThinkingLevel:
        return self.agent.state.thinking

    @property
    def thinking_label(self) -> str:
        """The thinking level as the model is actually asked ("low (the lowest this model
        allows)" when it cannot do what was set)."""
        from picode.ai.thinking import thinking_request

        return thinking_request(self.model, self.thinking).label

    @property
    def session_id(self) -> str | None:
        return self.recorder.session_id

    @property
    def session_file_path(self) -> Path | None:
        return self.recorder.path

    @property
    def session_name(self) -> str | None:
        return self.recorder.name

    @property
    def persistent(self) -> bool:
        """False with ``--no-session``: nothing is written to disk."""
        return self.recorder.persistent

    @property
    def store(self) -> SessionStore:
        """The saved sessions (for a picker)."""
        return self.recorder.store

    def session_header(self) -> dict[str, Any] | None:
        """The session file's header line (the file is created if need be); None when not
        saved."""
        file = self.recorder.ensure_file()
        return None if file is None else {**file.header, "path": str(file.path)}

    @property
    def extension_commands(self) -> dict[str, Command]:
        """Slash commands registered by extensions, by name."""
        return self.extensions.commands

    async def run_extension_command(self, name: str, argument: str) -> bool:
        """Run ``/name argument``; False when no extension registered ``name``."""
        return await self.extensions.run_command(name, argument)

    def mcp_servers(self) -> list[McpServerStatus]:
        """Each configured MCP server's state and tools (``McpServersChanged`` says when
        this changes); empty when none is configured."""
        return [] if self._mcp is None else self._mcp.statuses()

    async def wait_for_mcp(self) -> None:
        """Until every MCP server has connected or failed, each within its ``timeout_s``
        (headless runs wait so that the model sees the tools from the first prompt)."""
        if self._mcp is not None:
            await self._mcp.wait_settled()

    @property
    def approval_policy(self) -> ApprovalPolicy:
        """Which tool calls are asked about: "never", "edits" or "all"."""
        return self.approval.policy

    def set_approval_policy(self, policy: ApprovalPolicy) -> None:
        """From the next tool call on."""
        self.approval.policy = policy

    def set_approver(self, approver: Approver) -> None:
        """Who answers approval asks (the front end's prompt)."""
        self.approval.approver = approver

    def set_escalator(self, escalator: Approver) -> None:
        """Who is asked to run a command the sandbox blocked outside it (whatever the
        approval policy); without one the command's result says what was blocked."""
        self.approval.escalator = escalator

    @property
    def sandbox_state(self) -> tuple[bool, bool] | None:
        """(confining, network allowed) of the commands' sandbox; None without one."""
        sandboxes = self.approval.sandboxes
        if not sandboxes:
            return None
        return bool(sandboxes[0].active), bool(sandboxes[0].network())

    def allow_sandbox_network(self, allowed: bool) -> None:
        """Give sandboxed commands the network for the rest of this session, or take back
        what was given this session (what config.toml allows stays)."""
        for sandbox in self.approval.sandboxes:
            sandbox.network_for_session = allowed

    def tool(self, name: str) -> AgentTool | None:
        """The tool of that name the model can call now, if any."""
        return next((tool for tool in self.agent.state.tools if tool.name == name), None)

    def add_note(self, text: str) -> None:
        """Add ``text`` to the context as the person's message without running the model
        (``!cmd`` output); while picode works it waits as a follow-up. Raises ``OSError``
        when it cannot be saved (it stays in the context). Masked like a tool's result."""
        text = redact_tool_result(ToolResult.text(text), shapes=self._shapes).text_content
        if self._running:
            self.follow_up(text)
            return
        message = UserMessage(text)
        self.agent.append_message(message)
        self.recorder.record_message(message)

    def spend(self, reply: AssistantMessage | None) -> dict[str, Any]:
        """Count a request the session made of its own (a compaction's summary) in its
        usage; the running total, which the compaction entry keeps for a resume."""
        if reply is not None:
            self.usage.add(reply)
        return self.usage.as_record()

    @property
    def is_running(self) -> bool:
        return self._running

    @property
    def retry_pending(self) -> bool:
        return self._abort_retry is not None

    @property
    def messages(self) -> list[Message]:
        return self.agent.state.messages

    @property
    def queued_steering(self) -> list[str]:
        return [split_attachments(message)[0] for message in self.agent.queued_steering]

    @property
    def queued_follow_ups(self) -> list[str]:
        return [split_attachments(message)[0] for message in self.agent.queued_follow_ups]

    def display_messages(self) -> list[Message]:
        return self.recorder.display_messages()

    @property
    def display_count(self) -> int:
        return self.recorder.display_count

    def display_range(self, start: int, stop: int) -> list[Message]:
        return self.recorder.display_range(start, stop)

    @property
    def context_window(self) -> int:
        return self.model.context_window

    @property
    def context_tokens(self) -> int:
        from picode.session.recovery.compaction import context_tokens

        return context_tokens(self.messages)

    # --- events ------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        return self._events.subscribe(listener)

    async def emit(self, event: AnySessionEvent) -> None:
        await self._events.emit(event)

    def emit_soon(self, event: AnySessionEvent) -> None:
        """Emit from synchronous code; listeners still run in order on the loop."""
        self._events.emit_soon(event)

    async def _on_agent_event(self, event: AgentEvent) -> None:
        match event:
            case MessageUpdate():
                self.recovery.on_update(event)
            case MessageStart(message=message):
                if isinstance(message, AssistantMessage):
                    self.recovery.on_assistant_start()
                elif isinstance(message, UserMessage):
                    # A queued message may just have been delivered: the queues changed.
                    self._queue_changed()
                await self.extensions.emit("message_start", message)
            case MessageEnd(message=message):
                if self.recovery.keep_message(message):
                    self._record(message)
                    if isinstance(message, AssistantMessage):
                        self.usage.add(message)
                await self.extensions.emit("message_end", message)
            case AgentStart() | AgentEnd() | TurnStart() | TurnEnd():
                await self.extensions.emit(event.type, event)
        await self.emit(event)

    def _record(self, message: Message) -> None:
        try:
            self.recorder.record_message(message)
        except OSError as exc:
            # The conversation goes on in memory; the person must know it is not saved,
            # and a headless run must not exit 0 (see save_error).
            first = self.save_error is None
            self.save_error = str(exc)
            if first:
                self.emit_soon(SaveFailed(text=f"Could not save the session: {exc}"))

    # --- commands ----------------------------------------------------------------------

    async def prompt(self, text: str, attachments: Sequence[UserContent] = ()) -> None:
        """Run a prompt until the agent is idle (retries and recovery included).

        ``attachments`` follow the text: images, or the files of ``attach_mentions``."""
        if self._running:
            raise AgentBusyError(
                "picode is still working; steer or queue a follow-up, or abort first"
            )
        self.credentials.require(self.model)
        text = repair_text(await self.extensions.transform_input(repair_text(text)))
        message = _user_message(text, attachments)
        await self._run(lambda: self.agent.prompt(message))

    async def continue_(self) -> None:
        await self._run(self.agent.continue_)

    async def _run(self, start: Callable[[], Awaitable[None]]) -> None:
        async with self._run_lock:
            self._running = True
            try:
                await self.recovery.before_run()
                await start()
                await self.recovery.after_run()
                # Typed after the agent's last turn but before the run was over (while it
                # ended, retried or compacted): without this it would wait for the next run.
                while not self.recovery.cancelled and self._has_queued():
                    await self.agent.continue_()
                    await self.recovery.after_run()
            finally:
                self._running = False
                self._abort_retry = None

    async def wait_retry(self, delay_ms: int) -> bool:
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
        self.agent.steer(_user_message(repair_text(text), attachments))
        self._queue_changed()
        self._supersede_retry()

    def follow_up(self, text: str, attachments: Sequence[UserContent] = ()) -> None:
        self.agent.follow_up(_user_message(repair_text(text), attachments))
        self._queue_changed()
        self._supersede_retry()

    def _supersede_retry(self) -> None:
        """A message typed while a retry waits goes out at once, in place of the retry:
        the person has moved on, and waiting out the back-off would only delay them."""
        if self._abort_retry is not None:
            self._abort_retry.abort("message")

    def clear_queues(self) -> list[str]:
        """The queued messages as typed (attached files come back as their mentions)."""
        steering, follow_ups = self.agent.clear_queues()
        self._queue_changed()
        return [split_attachments(message)[0] for message in [*steering, *follow_ups]]

    def _has_queued(self) -> bool:
        return bool(self.agent.queued_steering or self.agent.queued_follow_ups)

    @property
    def has_queued_messages(self) -> bool:
        """Steering or follow-up messages wait to be delivered."""
        return self._has_queued()

    def _queue_changed(self) -> None:
        self.emit_soon(QueueChanged(self.queued_steering, self.queued_follow_ups))

    def abort(self) -> None:
        """Stop everything in flight: the stream, tools and a pending retry."""
        self.recovery.cancel()
        if self._abort_retry is not None:
            self._abort_retry.abort("user")
        self.agent.abort("user")

    async def wait_for_idle(self) -> None:
        while self._running or self.agent.is_running:
            await self.agent.wait_for_idle()
            await asyncio.sleep(0)
            if self._running:
                async with self._run_lock:
                    pass

    def set_model(self, model: Model) -> None:
        self.agent.set_model(model)
        self.recorder.record_model(model)
        self.emit_soon(ModelChanged(model.provider, model.id))

    def select_model(self, ref: str) -> ModelChoice:
        """Switch to ``ref`` (``provider/id[:thinking]``); the choice says what to warn
        about. Raises ``UnknownModelError``; nothing changes then."""
        choice = choose_model(self.registry, self.credentials, ref)
        if choice.model.ref != self.model.ref:
            self.set_model(choice.model)
        if choice.thinking is not None:
            self.set_thinking_level(choice.thinking)
        return choice

    def available_models(self) -> list[Model]:
        """Models whose provider has a key (or needs none), current one first in order."""
        return [m for m in self.registry.models() if self.credentials.has_key(m)]

    def cycle_model(self, direction: int = 1) -> Model:
        models = self.available_models() or [self.model]
        refs = [m.ref for m in models]
        index = refs.index(self.model.ref) if self.model.ref in refs else -1
        model = models[(index + direction) % len(models)]
        if model.ref != self.model.ref:
            self.set_model(model)
        return model

    def set_thinking_level(self, level: ThinkingLevel) -> None:
        self.agent.set_thinking(level)
        self.recorder.record_thinking(level)
        self.emit_soon(ThinkingLevelChanged(level))

    def cycle_thinking_level(self) -> ThinkingLevel:
        from picode.ai.thinking import runs_at

        level, _ = runs_at(self.model, next_thinking_level(self.thinking))
        self.set_thinking_level(level)
        return level

    async def compact(
        self, instructions: str | None = None, keep_recent_tokens: int | None = None
    ) -> None:
        """Summarise older messages now; ``keep_recent_tokens`` overrides the setting's
        verbatim tail for this once."""
        if self._running:
            raise AgentBusyError("cannot compact while picode is working; abort first")
        self._running = True
        try:
            await self.recovery.compact("manual", instructions, keep_recent_tokens)
        finally:
            self._running = False

    def set_session_name(self, name: str) -> None:
        self.recorder.set_name(name)
        self.emit_soon(SessionNameChanged(name))

    async def new_session(self) -> None:
        # Without a session file (--no-session) the next conversation stays off disk too.
        spec = "new" if self.recorder.persistent else None
        await switch_to(self, lambda: self.recorder.open(spec), "new")

    async def switch_session(self, id_or_path: str) -> None:
        await switch_to(self, lambda: self.recorder.open(id_or_path), "resume")

    async def fork(self, entry_id: str) -> str:
        text = ""

        def do_fork() -> Restored:
            nonlocal text
            restored, text = self.recorder.fork(entry_id)
            return restored

        await switch_to(self, do_fork, "fork", keep_choices=True)
        return text

    def user_messages_for_fork(self) -> list[tuple[str, str]]:
        return self.recorder.user_entries()

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
        await self.extensions.emit("session_end", self)
        if self._mcp is not None:
            await self._mcp.close()
        self.recorder.close()

    # --- hooks and extension sink --------------------------------------------------------

    async def _before_tool_call(self, call: ToolCall, args: Any) -> str | None:
        reason = await self.extensions.on_tool_call(call.name, call.arguments, call.id)
        if reason:
            return reason
        return await self.approval.check(call.id, call.name, call.arguments)

    async def _after_tool_call(self, call: ToolCall, result: ToolResult) -> ToolResult | None:
        changed = await self.extensions.on_tool_result(call.name, call.arguments, call.id, result)
        # What the model reads: keys and token shapes masked (docs/security.md, "Secrets").
        return redact_tool_result(changed or result, shapes=self._shapes)

    @property
    def _shapes(self) -> bool:
        """Are token shapes masked in what the model reads? (Keys always are.)"""
        return self.settings.redaction.tool_results

    def send_message(self, text: str, deliver_as: str = "follow_up") -> None:
        if deliver_as == "steer" and self._running:
            self.steer(text)
        elif self._running:
            self.follow_up(text)
        else:
            self._events.spawn(self.prompt(text))

    def append_entry(self, custom_type: str, data: Any) -> None:
        self.recorder.record_custom(custom_type, data)

    def notify(self, text: str, level: str = "info", source: str | None = None) -> None:
        self._notice(text, level, source)

    def _notice(self, text: str, level: str = "info", source: str | None = None) -> None:
        lvl: Any = level if level in ("info", "warning", "error") else "info"
        self.emit_soon(Notice(lvl, text, source))


def _user_message(text: str, attachments: Sequence[UserContent]) -> UserMessage:
    return UserMessage([TextContent(text), *attachments] if attachments else text)
