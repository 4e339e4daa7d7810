"""MessageBuilder and the provider runner: what every provider shares.

A provider only maps its SDK's native events onto builder calls (``text_delta`` and so on).
The builder keeps the partial message, emits picode events, parses streamed tool arguments
lazily, estimates missing usage and computes cost. ``run_provider`` owns the task, turns
an abort into task cancellation (so the SDK closes its HTTP connection at once) and turns
any failure into exactly one terminal ``error`` event.
"""

from __future__ import annotations

import asyncio
import copy
import importlib
import logging
import sys
import weakref
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

from picode.ai.errors import format_error_message
from picode.ai.event_stream import AssistantMessageEventStream
from picode.ai.events import (
    AssistantMessageEvent,
    DoneEvent,
    ErrorEvent,
    StartEvent,
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
from picode.ai.models import Model, calculate_cost
from picode.ai.partial_json import StreamingJson
from picode.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)

if TYPE_CHECKING:
    from picode.ai.options import StreamOptions

log = logging.getLogger(__name__)

Produce = Callable[[Model, Context, "StreamOptions", "MessageBuilder"], Awaitable[None]]

#: About 1,200 tokens, what providers bill for a typical image.
IMAGE_CHARS = 4800

ABORTED_MESSAGE = "Request aborted"
UNTERMINATED_MESSAGE = "Stream ended before the provider signalled completion"


class MessageBuilder:
    """Builds one AssistantMessage from provider events and emits picode events."""

    def __init__(self, model: Model, stream: AssistantMessageEventStream, context: Context):
        self.model = model
        # Weak: the running provider must not keep an abandoned stream alive, so dropping
        # the stream cancels the provider (see AssistantMessageEventStream.__del__).
        self._stream_ref = weakref.ref(stream)
        self.context = context
        self.message = AssistantMessage(
            content=[], api=model.api, provider=model.provider, model=model.id
        )
        self.started = False
        self.finished = False
        self.usage_reported = False
        self._args: dict[int, StreamingJson] = {}
        self._open: dict[int, str] = {}
        stream.before_toolcall_delivery = self._refresh_arguments

    @property
    def stream(self) -> AssistantMessageEventStream | None:
        """The stream events go to; None once its consumer has dropped it."""
        return self._stream_ref()

    def _emit(self, event: AssistantMessageEvent) -> None:
        stream = self._stream_ref()
        if stream is not None:
            stream.push(event)

    # --- lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        if not self.started:
            self.started = True
            self._emit(StartEvent(self.message))

    def finish(self, stop_reason: Literal["stop", "length", "toolUse", "error"]) -> None:
        """The provider reached its end marker; ``error`` is for a model-reported failure."""
        if self.finished:
            return
        self.start()
        self.close_open_blocks()
        message = self.message
        if stop_reason == "stop" and message.tool_calls:
            # Some APIs report "stop" with tool calls present; the calls still need running.
            stop_reason = "toolUse"
        message.stop_reason = stop_reason
        self._complete_usage()
        self.finished = True
        if stop_reason == "error":
            if not message.error_message:
                message.error_message = "The model stopped with an error"
            self._emit(ErrorEvent("error", message))
        else:
            self._emit(DoneEvent(stop_reason, message))

    def fail(self, error_message: str, *, aborted: bool = False) -> None:
        """End with an error, keeping whatever partial content arrived."""
        if self.finished:
            return
        self.finished = True
        for index in list(self._open):
            self._materialise_arguments(index)
        self._open.clear()
        end_in_failure(
            self.message,
            self.model,
            self.context,
            error_message,
            aborted=aborted,
            nothing_arrived=not self.started and not self.usage_reported,
        )
        self._emit(ErrorEvent("aborted" if aborted else "error", self.message))

    # --- blocks ------------------------------------------------------------------------

    def text_start(self, signature: str | None = None) -> int:
        self.start()
        index = self._append(TextContent("", signature))
        self._open[index] = "text"
        self._emit(TextStartEvent(index, self.message))
        return index

    def text_delta(self, index: int, delta: str) -> None:
        if not delta:
            return
        block = self.message.content[index]
        assert isinstance(block, TextContent)
        block.text += delta
        self._emit(TextDeltaEvent(index, delta, self.message))

    def text_end(self, index: int, signature: str | None = None) -> None:
        if self._open.pop(index, None) is None:
            return
        block = self.message.content[index]
        assert isinstance(block, TextContent)
        if signature is not None:
            block.text_signature = signature
        self._emit(TextEndEvent(index, block.text, self.message))

    def thinking_start(self, signature: str | None = None, *, redacted: bool = False) -> int:
        self.start()
        index = self._append(ThinkingContent("", signature, redacted))
        self._open[index] = "thinking"
        self._emit(ThinkingStartEvent(index, self.message))
        return index

    def thinking_delta(self, index: int, delta: str) -> None:
        if not delta:
            return
        block = self.message.content[index]
        assert isinstance(block, ThinkingContent)
        block.thinking += delta
        self._emit(ThinkingDeltaEvent(index, delta, self.message))

    def thinking_signature(self, index: int, signature: str, *, append: bool = True) -> None:
        block = self.message.content[index]
        assert isinstance(block, ThinkingContent)
        if append and block.thinking_signature:
            block.thinking_signature += signature
        else:
            block.thinking_signature = signature

    def thinking_end(self, index: int) -> None:
        if self._open.pop(index, None) is None:
            return
        block = self.message.content[index]
        assert isinstance(block, ThinkingContent)
        self._emit(ThinkingEndEvent(index, block.thinking, self.message))

    def toolcall_start(
        self, call_id: str, name: str, *, thought_signature: str | None = None
    ) -> int:
        self.start()
        index = self._append(ToolCall(call_id, name, {}, thought_signature))
        self._open[index] = "toolCall"
        self._args[index] = StreamingJson()
        self._emit(ToolCallStartEvent(index, self.message))
        return index

    def toolcall_delta(self, index: int, delta: str) -> None:
        if not delta:
            return
        buffer = self._args.get(index)
        if buffer is None:
            buffer = self._args[index] = StreamingJson()
        buffer.append(delta)
        self._emit(ToolCallDeltaEvent(index, delta, self.message))

    def toolcall_arguments_text(self, index: int) -> str:
        buffer = self._args.get(index)
        return buffer.text if buffer is not None else ""

    def toolcall_end(self, index: int, arguments: dict[str, Any] | None = None) -> None:
        """End a call; ``arguments`` when the API delivers them whole (else parsed once)."""
        if self._open.pop(index, None) is None:
            return
        block = self.message.content[index]
        assert isinstance(block, ToolCall)
        if arguments is not None:
            block.arguments = arguments
        else:
            self._materialise_arguments(index)
        self._args.pop(index, None)
        self._emit(ToolCallEndEvent(index, block, self.message))

    def close_open_blocks(self) -> None:
        for index, kind in list(self._open.items()):
            if kind == "text":
                self.text_end(index)
            elif kind == "thinking":
                self.thinking_end(index)
            else:
                self.toolcall_end(index)

    def is_open(self, index: int) -> bool:
        return index in self._open

    # --- usage -------------------------------------------------------------------------

    def set_usage(
        self,
        *,
        input: int | None = None,
        output: int | None = None,
        cache_read: int | None = None,
        cache_write: int | None = None,
    ) -> None:
        """Record usage; ``input`` must already exclude cached tokens."""
        usage = self.message.usage
        if input is not None:
            usage.input = max(0, int(input))
        if output is not None:
            usage.output = max(0, int(output))
        if cache_read is not None:
            usage.cache_read = max(0, int(cache_read))
        if cache_write is not None:
            usage.cache_write = max(0, int(cache_write))
        usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
        self.usage_reported = True
        calculate_cost(self.model, usage)

    def _complete_usage(self) -> None:
        usage = self.message.usage
        if not self.usage_reported or usage.total_tokens == 0:
            _fill_with_estimate(usage, self.context, self.message)
        usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
        calculate_cost(self.model, usage)

    # --- internals ---------------------------------------------------------------------

    def _append(self, block: TextContent | ThinkingContent | ToolCall) -> int:
        self.message.content.append(block)
        return len(self.message.content) - 1

    def _refresh_arguments(self, index: int) -> None:
        buffer = self._args.get(index)
        if buffer is None:
            return
        block = self.message.content[index]
        if isinstance(block, ToolCall):
            block.arguments = buffer.snapshot()

    def _materialise_arguments(self, index: int) -> None:
        buffer = self._args.get(index)
        block = self.message.content[index] if index < len(self.message.content) else None
        if buffer is not None and isinstance(block, ToolCall) and len(buffer):
            block.arguments = buffer.final()


def terminal_message(
    partial: AssistantMessage | None,
    model: Model,
    context: Context,
    error: str,
    *,
    aborted: bool,
) -> AssistantMessage:
    """The end of a stream its consumer stopped reading (Esc, a cut or failed stream): a copy
    of what arrived, detached from the provider, which may still touch its own object while
    it unwinds, ended by the same rules as a provider's own failure."""
    if partial is None:
        message = AssistantMessage(
            content=[], api=model.api, provider=model.provider, model=model.id
        )
    else:
        message = AssistantMessage(
            content=[copy.copy(block) for block in partial.content],
            api=partial.api,
            provider=partial.provider,
            model=partial.model,
            usage=copy.deepcopy(partial.usage),
            timestamp=partial.timestamp,
            response_id=partial.response_id,
        )
    return end_in_failure(
        message, model, context, error, aborted=aborted, nothing_arrived=partial is None
    )


def end_in_failure(
    message: AssistantMessage,
    model: Model,
    context: Context,
    error: str,
    *,
    aborted: bool,
    nothing_arrived: bool,
) -> AssistantMessage:
    """Mark ``message`` failed or aborted and complete its usage: the one place that decides
    how a message ends when it does not end normally."""
    message.stop_reason = "aborted" if aborted else "error"
    message.error_message = error
    if nothing_arrived:
        # Nothing came back (401, 429, a refused connection, Esc before the reply): no
        # tokens were used, and an estimate would inflate the totals with each retry.
        return message
    usage = message.usage
    if usage.total_tokens == 0:
        _fill_with_estimate(usage, context, message)
    elif not usage.estimated:
        # A cut stream leaves output usage at its last report (often message_start's);
        # what actually arrived is a better figure.
        usage.output = max(usage.output, tokens_for_chars(message_chars(message)))
    usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
    calculate_cost(model, usage)
    return message


def _fill_with_estimate(usage: Usage, context: Context, message: AssistantMessage) -> None:
    # Aborts, cut streams and some local servers leave usage out; the context meter and
    # compaction still need a figure.
    estimate = estimate_usage(context, message)
    usage.input = estimate.input
    usage.output = estimate.output
    usage.estimated = True


def tokens_for_chars(chars: int) -> int:
    """The usual rough measure, the one picode uses everywhere: four characters a token."""
    return (chars + 3) // 4


def estimate_tokens(text: str) -> int:
    return tokens_for_chars(len(text))


def estimate_usage(context: Context, message: AssistantMessage | None = None) -> Usage:
    chars = len(context.system_prompt or "")
    for item in context.messages:
        chars += message_chars(item)
    for tool in context.tools or ():
        chars += len(tool.name) + len(tool.description) + len(str(tool.parameters))
    output = message_chars(message) if message is not None else 0
    usage = Usage(input=tokens_for_chars(chars), output=tokens_for_chars(output), estimated=True)
    usage.total_tokens = usage.input + usage.output
    return usage


def message_chars(message: Any) -> int:
    """Characters a message puts in the context (an image counts as ~1,200 tokens)."""
    content = message.content
    if isinstance(content, str):
        return len(content)
    total = 0
    for block in content:
        if isinstance(block, TextContent):
            total += len(block.text)
        elif isinstance(block, ThinkingContent):
            total += len(block.thinking)
        elif isinstance(block, ToolCall):
            total += len(block.name) + len(str(block.arguments))
        elif isinstance(block, ImageContent):
            total += IMAGE_CHARS
    return total


async def import_provider(module_name: str) -> Any:
    """Import a provider module off the event loop: SDK imports take hundreds of ms.

    A module another thread is still importing (the TUI warms the SDK in the background)
    is already in ``sys.modules`` but half built; importing it again waits for that import
    to finish, in a worker thread so the loop keeps running."""
    module = sys.modules.get(module_name)
    spec = getattr(module, "__spec__", None)
    if module is not None and not getattr(spec, "_initializing", False):
        return module
    return await asyncio.to_thread(importlib.import_module, module_name)


def run_provider(
    produce: Produce | str,
    model: Model,
    context: Context,
    options: StreamOptions,
) -> AssistantMessageEventStream:
    """Start ``produce`` (a function or a module name exposing ``produce``) in a task."""
    stream = AssistantMessageEventStream()
    builder = MessageBuilder(model, stream, context)
    task = asyncio.get_running_loop().create_task(_drive(produce, model, context, options, builder))
    stream.attach_producer(task)
    return stream


async def _drive(
    produce: Produce | str,
    model: Model,
    context: Context,
    options: StreamOptions,
    builder: MessageBuilder,
) -> None:
    signal = options.signal
    task = asyncio.current_task()
    assert task is not None
    unhook: Callable[[], None] | None = None
    if signal is not None:
        if signal.aborted:
            builder.fail(ABORTED_MESSAGE, aborted=True)
            return

        def cancel_task(_reason: Any) -> None:
            task.cancel()

        unhook = signal.add_callback(cancel_task)
    try:
        if isinstance(produce, str):
            produce = (await import_provider(produce)).produce
        assert not isinstance(produce, str)
        await produce(model, context, options, builder)
        if signal is not None and signal.aborted:
            builder.fail(ABORTED_MESSAGE, aborted=True)
        elif not builder.finished:
            builder.fail(UNTERMINATED_MESSAGE)
    except asyncio.CancelledError:
        if signal is not None and signal.aborted:
            task.uncancel()
            builder.fail(ABORTED_MESSAGE, aborted=True)
        else:
            builder.fail("Request cancelled", aborted=True)
            raise
    except Exception as exc:
        if signal is not None and signal.aborted:
            builder.fail(ABORTED_MESSAGE, aborted=True)
        else:
            log.debug("provider %s failed", model.api, exc_info=True)
            builder.fail(format_error_message(exc))
    finally:
        if unhook is not None:
            unhook()
