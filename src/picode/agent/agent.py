"""``Agent``: state, listeners, queues and one run at a time around ``agent_loop``.

State is updated before listeners see an event, so a listener reading ``agent.state``
sees the event already applied. ``state.messages`` is the message log (agent/message_log.py):
finished messages only, each added just before its ``MessageEnd``; the one being streamed
is ``state.streaming_message``.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from picode.agent.events import (
    AgentEnd,
    AgentEvent,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
)
from picode.agent.loop import AgentLoopConfig, StreamFn, agent_loop
from picode.agent.message_log import MessageLog
from picode.agent.queue_mode import QUEUE_MODES, QueueMode
from picode.agent.tool import AgentTool, ToolResult
from picode.agent.tool_exec import DEFAULT_MAX_PARALLEL, ToolHooks
from picode.ai.abort import AbortController
from picode.ai.models import THINKING_LEVELS, Model, ThinkingLevel
from picode.ai.options import StreamOptions
from picode.ai.stream import stream_simple
from picode.ai.types import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserContent,
    UserMessage,
)

log = logging.getLogger(__name__)

Listener: TypeAlias = Callable[[AgentEvent], Awaitable[None] | None]


class AgentError(Exception):
    """A command the agent cannot carry out in its current state."""


class AgentBusyError(AgentError):
    def __init__(self, action: str = "start a new run") -> None:
        super().__init__(
            f"Cannot {action}: the agent is still running. Wait for it to finish, steer it "
            "with steer(), queue a follow-up with follow_up(), or abort it."
        )


@dataclass(slots=True)
class AgentState:
    model: Model
    messages: MessageLog = field(default_factory=MessageLog)
    thinking: ThinkingLevel = "off"
    tools: list[AgentTool] = field(default_factory=list)
    system_prompt: str = ""
    is_running: bool = False
    streaming_message: AssistantMessage | None = None
    pending_tool_calls: set[str] = field(default_factory=set)
    #: The error of the last run (a failed response or an internal failure), else None.
    error: str | None = None


class Agent:
    def __init__(
        self,
        *,
        model: Model,
        system_prompt: str = "",
        tools: Sequence[AgentTool] = (),
        thinking: ThinkingLevel = "off",
        messages: Sequence[Message] = (),
        stream_fn: StreamFn = stream_simple,
        stream_options: Callable[[Model], StreamOptions] | None = None,
        before_tool_call: Callable[[ToolCall, Any], Awaitable[str | None]] | None = None,
        after_tool_call: Callable[[ToolCall, ToolResult], Awaitable[ToolResult | None]]
        | None = None,
        steering_mode: QueueMode = "one-at-a-time",
        follow_up_mode: QueueMode = "one-at-a-time",
        max_parallel: int = DEFAULT_MAX_PARALLEL,
        should_stop: Callable[[int, Sequence[Message]], bool] | None = None,
    ) -> None:
        self.state = AgentState(
            model=model,
            messages=MessageLog(messages),
            thinking=_checked_thinking(thinking),
            tools=_checked_tools(tools),
            system_prompt=system_prompt,
        )
        self.stream_fn = stream_fn
        self.stream_options = stream_options
        self.hooks = ToolHooks(before_tool_call, after_tool_call)
        #: Tool calls of one reply that execute at once (the rest wait their turn).
        self.max_parallel = max_parallel
        #: Asked before each request that follows tool results alone (``AgentLoopConfig``).
        self.should_stop = should_stop
        self.steering_mode: QueueMode = _checked_mode(steering_mode, "steering_mode")
        self.follow_up_mode: QueueMode = _checked_mode(follow_up_mode, "follow_up_mode")
        self._listeners: tuple[Listener, ...] = ()
        self._steering: list[UserMessage] = []
        self._follow_ups: list[UserMessage] = []
        self._controller: AbortController | None = None
        self._run_task: asyncio.Task[list[Message]] | None = None

    # --- events ------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` for every event, in subscription order; returns an unsubscribe.

        An awaitable result is awaited before the next event; an exception is logged.
        """
        self._listeners = (*self._listeners, listener)

        def unsubscribe() -> None:
            listeners = list(self._listeners)
            if listener in listeners:
                listeners.remove(listener)
                self._listeners = tuple(listeners)

        return unsubscribe

    async def _emit(self, event: AgentEvent) -> None:
        state = self.state
        if type(event) is MessageUpdate:
            state.streaming_message = event.message
        else:
            self._apply(event)
        for listener in self._listeners:
            try:
                result = listener(event)
                if result is not None and inspect.isawaitable(result):
                    await result
            except Exception:
                log.exception("agent listener failed on %s", event.type)

    def _apply(self, event: AgentEvent) -> None:
        state = self.state
        match event:
            case MessageStart(message=AssistantMessage() as message):
                state.streaming_message = message
            case MessageEnd(message=message):
                if isinstance(message, AssistantMessage):
                    state.streaming_message = None
                    if message.stop_reason == "error":
                        state.error = message.error_message or "The model stopped with an error"
            case ToolExecutionStart(tool_call_id=call_id):
                state.pending_tool_calls.add(call_id)
            case ToolExecutionEnd(tool_call_id=call_id):
                state.pending_tool_calls.discard(call_id)
            case AgentEnd():
                # Idle before listeners hear of it, so one may start the next run at once.
                state.is_running = False
                state.streaming_message = None
                state.pending_tool_calls.clear()

    # --- runs --------------------------------------------------------------------------

    @property
    def is_running(self) -> bool:
        return self.state.is_running

    async def prompt(
        self,
        message: str | UserMessage | Sequence[Message],
        *,
        images: Sequence[ImageContent] = (),
        queue_if_busy: bool = False,
    ) -> None:
        """Add the prompt and run until the agent stops.

        When a run is active: raise ``AgentBusyError``, or with ``queue_if_busy`` queue the
        prompt as a follow-up and return at once.
        """
        prompts = _prompt_messages(message, images)
        if self.is_running:
            if not queue_if_busy:
                raise AgentBusyError("prompt")
            for item in prompts:
                if not isinstance(item, UserMessage):
                    raise TypeError(f"Only user messages can be queued, not a {item.role} message")
                self._follow_ups.append(item)
            return
        await self._run(prompts)

    async def continue_(self) -> None:
        """Resume from the current messages (after an error, an abort or a restored session).

        The last message must be a user or tool-result message, or messages must be queued.
        """
        if self.is_running:
            raise AgentBusyError("continue")
        last = self.state.messages[-1] if self.state.messages else None
        if isinstance(last, UserMessage | ToolResultMessage):
            await self._run([])
            return
        queued = self._take_steering() or self._take_follow_ups()
        if queued:
            await self._run(list(queued))
            return
        if last is None:
            raise AgentError("Cannot continue: there are no messages yet. Send a prompt first.")
        raise AgentError(
            "Cannot continue: the last message is the assistant's and nothing is queued. "
            "Send a prompt or queue a message first."
        )

    async def _run(self, prompts: list[Message]) -> None:
        state = self.state
        # Marked busy before the first await, so a concurrent prompt() sees it.
        state.is_running = True
        state.error = None
        state.streaming_message = None
        state.pending_tool_calls.clear()
        controller = self._controller = AbortController()
        config = AgentLoopConfig(
            stream_fn=self.stream_fn,
            take_steering=self._take_steering,
            steering_queued=lambda: bool(self._steering),
            take_follow_ups=self._take_follow_ups,
            stream_options=self.stream_options,
            hooks=self.hooks,
            max_parallel=self.max_parallel,
            should_stop=self.should_stop,
        )
        task = asyncio.get_running_loop().create_task(
            self._drive(prompts, config, controller), name="picode-agent-run"
        )
        self._run_task = task
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            # The caller gave up waiting: stop the run too, leaving a valid transcript.
            controller.abort("cancelled")
            raise

    async def _drive(
        self, prompts: list[Message], config: AgentLoopConfig, controller: AbortController
    ) -> list[Message]:
        history = self.state.messages
        mark = len(history)
        ended = False

        async def emit(event: AgentEvent) -> None:
            nonlocal ended
            if type(event) is AgentEnd:
                ended = True
            await self._emit(event)

        try:
            return await agent_loop(prompts, history, self.state, config, controller.signal, emit)
        except BaseException as exc:
            if not isinstance(exc, asyncio.CancelledError):
                log.exception("agent run failed")
                self.state.error = f"Internal error: {type(exc).__name__}: {exc}"
            if not ended:
                await self._emit(AgentEnd(history.since(mark)))
            raise
        finally:
            # A listener may already have started the next run on AgentEnd: leave it be.
            if self._run_task is asyncio.current_task():
                self._run_task = None
                self._controller = None
                self.state.is_running = False

    def abort(self, reason: str = "aborted") -> None:
        """Abort the stream and every tool of the current run; a no-op when idle."""
        controller = self._controller
        if controller is not None:
            try:
                controller.abort(reason)
            except Exception:  # aborting must never fail its caller
                log.exception("abort failed")

    async def wait_for_idle(self) -> None:
        """Return once no run is active (including runs started while waiting)."""
        while (task := self._run_task) is not None and not task.done():
            await asyncio.wait({task})

    # --- queues ------------------------------------------------------------------------

    def steer(self, message: str | UserMessage) -> None:
        """Queue a message delivered after the current tool completes (or the turn ends);
        tools still running then are skipped."""
        self._steering.append(_user_message(message))

    def follow_up(self, message: str | UserMessage) -> None:
        """Queue a message delivered only when the agent would otherwise stop."""
        self._follow_ups.append(_user_message(message))

    def clear_queues(self) -> tuple[list[UserMessage], list[UserMessage]]:
        """Remove and return (steering, follow-ups) so they can go back into the editor."""
        steering, self._steering = self._steering, []
        follow_ups, self._follow_ups = self._follow_ups, []
        return steering, follow_ups

    @property
    def queued_steering(self) -> list[UserMessage]:
        return list(self._steering)

    @property
    def queued_follow_ups(self) -> list[UserMessage]:
        return list(self._follow_ups)

    def _take_steering(self) -> list[UserMessage]:
        return _take(self._steering, self.steering_mode)

    def _take_follow_ups(self) -> list[UserMessage]:
        return _take(self._follow_ups, self.follow_up_mode)

    # --- settings ----------------------------------------------------------------------

    def set_model(self, model: Model) -> None:
        """Used from the next model call on (also mid-run)."""
        self.state.model = model

    def set_thinking(self, level: ThinkingLevel) -> None:
        self.state.thinking = _checked_thinking(level)

    def set_tools(self, tools: Sequence[AgentTool]) -> None:
        self.state.tools = _checked_tools(tools)

    def set_system_prompt(self, text: str) -> None:
        self.state.system_prompt = text

    def replace_messages(self, messages: Sequence[Message]) -> None:
        if self.is_running:
            raise AgentBusyError("replace the messages")
        self.state.messages.replace(messages)

    def append_message(self, message: Message) -> None:
        if self.is_running:
            raise AgentBusyError("append a message (use steer() or follow_up() while running)")
        self.state.messages.append(message)


def _take(queue: list[UserMessage], mode: QueueMode) -> list[UserMessage]:
    if not queue:
        return []
    if mode == "all":
        taken = queue[:]
        queue.clear()
        return taken
    return [queue.pop(0)]


def _user_message(message: str | UserMessage) -> UserMessage:
    if isinstance(message, UserMessage):
        return message
    if not isinstance(message, str):
        raise TypeError(f"Expected a str or UserMessage, got {type(message).__name__}")
    if not message.strip():
        raise ValueError("The message is empty")
    return UserMessage(message)


def _prompt_messages(
    message: str | UserMessage | Sequence[Message], images: Sequence[ImageContent]
) -> list[Message]:
    if isinstance(message, str):
        if not message.strip() and not images:
            raise ValueError("The prompt is empty: give some text or at least one image")
        if not images:
            return [UserMessage(message)]
        content: list[UserContent] = [TextContent(message)] if message else []
        content.extend(images)
        return [UserMessage(content)]
    if isinstance(message, UserMessage):
        if not images:
            return [message]
        base = message.content
        blocks: list[UserContent] = [TextContent(base)] if isinstance(base, str) else list(base)
        blocks.extend(images)
        return [UserMessage(blocks, message.timestamp)]
    prompts = list(message)
    if not prompts:
        raise ValueError("The prompt is empty: no messages given")
    if images:
        raise ValueError("Images can only be attached to a text or user-message prompt")
    for item in prompts:
        if not isinstance(item, UserMessage | AssistantMessage | ToolResultMessage):
            raise TypeError(f"Not a message: {item!r}")
    return prompts


def _checked_thinking(level: str) -> ThinkingLevel:
    if level not in THINKING_LEVELS:
        raise ValueError(
            f"Unknown thinking level {level!r}; expected one of {', '.join(THINKING_LEVELS)}"
        )
    return level


def _checked_mode(mode: str, name: str) -> QueueMode:
    for known in QUEUE_MODES:
        if mode == known:
            return known
    raise ValueError(f"Unknown {name} {mode!r}; expected 'one-at-a-time' or 'all'")


def _checked_tools(tools: Sequence[AgentTool]) -> list[AgentTool]:
    names = [tool.name for tool in tools]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ValueError(f"Duplicate tool name(s): {', '.join(duplicates)}")
    return list(tools)
