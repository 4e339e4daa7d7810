"""The agent loop (docs/architecture.md): prompt → response → tool calls → ... until done.

``agent_loop`` works on a context list it owns and reports everything through ``emit``,
which is awaited for each event (so a listener sees events in order, one at a time). It
never raises for provider, tool or hook failures: they become messages the model or the
user can read, and the transcript it leaves is always valid to send again (every tool
call has a result).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

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
from picode.agent.message_log import MessageLog
from picode.agent.tool import AgentTool, tool_spec
from picode.agent.tool_exec import (
    DEFAULT_MAX_PARALLEL,
    NOT_RUN_AFTER_ABORT,
    NOT_RUN_AFTER_ERROR,
    TRUNCATED_TOOL_CALL,
    Emit,
    ToolHooks,
    execute_tool_calls,
)
from picode.ai.abort import AbortSignal
from picode.ai.builder import ABORTED_MESSAGE, UNTERMINATED_MESSAGE, terminal_message
from picode.ai.errors import format_error_message
from picode.ai.event_stream import AssistantMessageEventStream
from picode.ai.events import DoneEvent, ErrorEvent, StartEvent
from picode.ai.models import Model, ThinkingLevel
from picode.ai.options import StreamOptions
from picode.ai.types import (
    AssistantMessage,
    Context,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

log = logging.getLogger(__name__)

StreamFn = Callable[[Model, Context, StreamOptions], AssistantMessageEventStream]


class LoopSettings(Protocol):
    """What the loop reads before each model call (so changes apply from the next call)."""

    model: Model
    thinking: ThinkingLevel
    tools: list[AgentTool]
    system_prompt: str


@dataclass(slots=True)
class AgentLoopConfig:
    stream_fn: StreamFn
    #: Drain queued steering messages (per the queue mode); polled after each turn.
    take_steering: Callable[[], list[UserMessage]]
    #: Whether steering is queued, without taking it; polled after each tool completes.
    steering_queued: Callable[[], bool]
    #: Drain queued follow-ups (per the queue mode); polled when the agent would stop.
    take_follow_ups: Callable[[], list[UserMessage]]
    stream_options: Callable[[Model], StreamOptions] | None = None
    hooks: ToolHooks = field(default_factory=ToolHooks)
    #: Tool calls of one reply that execute at once.
    max_parallel: int = DEFAULT_MAX_PARALLEL
    #: Asked before a request that follows tool results alone: stop the run here? Gets the
    #: requests made since the person's last message, and the messages since then.
    should_stop: Callable[[int, Sequence[Message]], bool] | None = None


async def agent_loop(
    prompts: Sequence[Message],
    messages: MessageLog,
    settings: LoopSettings,
    config: AgentLoopConfig,
    signal: AbortSignal,
    notify: Emit,
) -> list[Message]:
    """Run until the agent stops; ``messages`` (the transcript) grows in place.

    With no ``prompts`` this continues from ``messages`` as they are. Returns the messages
    added by this run (also carried by ``AgentEnd``).
    """
    mark = len(messages)

    async def emit(event: AgentEvent) -> None:
        # The one place a message joins the transcript: before any listener hears it ended.
        if type(event) is MessageEnd:
            messages.append(event.message)
        await notify(event)

    async def deliver(batch: Sequence[Message]) -> None:
        for message in batch:
            await emit(MessageStart(message))
            await emit(MessageEnd(message))

    await emit(AgentStart())
    await emit(TurnStart())
    await deliver(prompts)
    pending: list[Message] = list(config.take_steering())
    first_turn = True
    # Requests since the person last said something, and where that was.
    requests, since = 0, mark
    while True:
        more_tool_calls = True
        while more_tool_calls or pending:
            if pending:
                requests, since = 0, len(messages)
            elif config.should_stop is not None and config.should_stop(
                requests, messages.since(since)
            ):
                return await _end(messages, mark, emit)
            if first_turn:
                first_turn = False
            else:
                await emit(TurnStart())
            await deliver(pending)
            pending = []

            assistant = await stream_assistant_response(messages, settings, config, signal, emit)
            requests += 1
            calls = assistant.tool_calls
            results: list[ToolResultMessage] = []
            if assistant.stop_reason in ("error", "aborted"):
                if calls:
                    text = (
                        NOT_RUN_AFTER_ABORT
                        if assistant.stop_reason == "aborted"
                        else NOT_RUN_AFTER_ERROR
                    )
                    results = await _run_tools(
                        calls,
                        settings,
                        config,
                        signal,
                        emit,
                        dict.fromkeys(range(len(calls)), text),
                    )
                await emit(TurnEnd(assistant, results))
                return await _end(messages, mark, emit)

            more_tool_calls = bool(calls)
            if calls:
                not_run: dict[int, str] = {}
                if assistant.stop_reason == "length" and isinstance(
                    assistant.content[-1], ToolCall
                ):
                    # Cut off while writing the last call: its arguments may be incomplete.
                    not_run[len(calls) - 1] = TRUNCATED_TOOL_CALL
                results = await _run_tools(calls, settings, config, signal, emit, not_run)
            await emit(TurnEnd(assistant, results))
            if signal.aborted:
                return await _end(messages, mark, emit)
            pending = list(config.take_steering())

        pending = list(config.take_follow_ups())
        if not pending:
            break
    return await _end(messages, mark, emit)


async def _end(messages: MessageLog, mark: int, emit: Emit) -> list[Message]:
    added = messages.since(mark)
    await emit(AgentEnd(added))
    return added


async def _run_tools(
    calls: list[ToolCall],
    settings: LoopSettings,
    config: AgentLoopConfig,
    signal: AbortSignal,
    emit: Emit,
    not_run: dict[int, str],
) -> list[ToolResultMessage]:
    return await execute_tool_calls(
        calls,
        tools=list(settings.tools),
        hooks=config.hooks,
        run_signal=signal,
        steering_queued=config.steering_queued,
        emit=emit,
        not_run=not_run,
        max_parallel=config.max_parallel,
    )


async def stream_assistant_response(
    messages: list[Message],
    settings: LoopSettings,
    config: AgentLoopConfig,
    signal: AbortSignal,
    emit: Emit,
) -> AssistantMessage:
    """Stream one assistant message after ``messages``, bridging provider events to agent
    events; the message joins the transcript at its ``MessageEnd`` (see ``agent_loop``)."""
    model = settings.model
    context = Context(settings.system_prompt or None, messages, None)
    try:
        context = await _build_context(messages, settings, config)
        options = config.stream_options(model) if config.stream_options else StreamOptions()
        options.signal = signal
        options.thinking = settings.thinking
        if signal.aborted:
            return await _finish_without_stream(_aborted(None, model, context), emit)
        stream = config.stream_fn(model, context, options)
    except Exception as exc:
        log.debug("could not start the model request", exc_info=True)
        failed = _failed(None, model, context, format_error_message(exc))
        return await _finish_without_stream(failed, emit)

    # A stream that ignores the signal must not hold the loop: ending it wakes the consumer.
    unhook = signal.add_callback(lambda _reason: stream.end())
    partial: AssistantMessage | None = None
    final: AssistantMessage | None = None
    try:
        async for event in stream:
            if signal.aborted:
                break
            if isinstance(event, DoneEvent | ErrorEvent):
                final = await stream.result()
                break
            if isinstance(event, StartEvent):
                if partial is None:
                    partial = event.partial
                    await emit(MessageStart(partial))
                continue
            if partial is None:
                # A block before "start": treat it as the start.
                partial = event.partial
                await emit(MessageStart(partial))
            else:
                partial = event.partial
            await emit(MessageUpdate(partial, event))
    except Exception as exc:
        if not signal.aborted:
            log.debug("model stream failed", exc_info=True)
            final = _failed(partial, model, context, format_error_message(exc))
            await stream.aclose()
    finally:
        unhook()
        if final is None:
            await stream.aclose()

    if final is None:
        if signal.aborted:
            final = _aborted(partial, model, context)
        else:
            final = _failed(partial, model, context, UNTERMINATED_MESSAGE)
    if partial is None:
        return await _finish_without_stream(final, emit)
    await emit(MessageEnd(final))
    return final


async def _build_context(
    messages: list[Message], settings: LoopSettings, config: AgentLoopConfig
) -> Context:
    llm_messages: list[Message] = list(messages)
    tools = [tool_spec(tool) for tool in settings.tools]
    return Context(settings.system_prompt or None, llm_messages, tools or None)


async def _finish_without_stream(final: AssistantMessage, emit: Emit) -> AssistantMessage:
    """A message that never streamed still gets start and end, so the UI can show it."""
    await emit(MessageStart(final))
    await emit(MessageEnd(final))
    return final


def _aborted(partial: AssistantMessage | None, model: Model, context: Context) -> AssistantMessage:
    return terminal_message(partial, model, context, ABORTED_MESSAGE, aborted=True)


def _failed(
    partial: AssistantMessage | None, model: Model, context: Context, error: str
) -> AssistantMessage:
    return terminal_message(partial, model, context, error, aborted=False)
