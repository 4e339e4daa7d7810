"""Running the tool calls of one assistant message (docs/architecture.md).

All calls start together and run as concurrent tasks, at most ``max_parallel`` of them in
a tool's ``execute`` at once (a reply of a thousand bash calls must not start a thousand
shells). Each call's end is emitted when it completes; the result messages, in the order
the model wrote the calls.
Each tool gets a signal that follows both the run's signal and this batch's steering signal.
When a signal fires, the call's result is decided at once (the tool task is cancelled too),
so a tool that ignores its signal can never hold the loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from picode.agent.events import (
    AgentEvent,
    MessageEnd,
    MessageStart,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
)
from picode.agent.tool import AgentTool, ToolArgumentsError, ToolError, ToolResult
from picode.ai.abort import AbortController, AbortSignal
from picode.ai.text_repair import has_surrogates, repair_text, repair_tree
from picode.ai.types import TextContent, ToolCall, ToolResultMessage

log = logging.getLogger(__name__)

Emit = Callable[[AgentEvent], Awaitable[None]]
BeforeToolCall = Callable[[ToolCall, Any], Awaitable[str | None]]
AfterToolCall = Callable[[ToolCall, ToolResult], Awaitable[ToolResult | None]]

SKIPPED_FOR_STEERING = "Skipped due to queued user message."
ABORTED_TOOL_CALL = "Aborted: the user stopped the agent before this tool call finished."
NOT_RUN_AFTER_ABORT = "Aborted: the response was stopped before this tool call could run."
NOT_RUN_AFTER_ERROR = "Not executed: the response failed before this tool call could run."
TRUNCATED_TOOL_CALL = (
    "Not executed: the response hit the output token limit while this tool call was being "
    "written, so its arguments may be incomplete. Retry with smaller arguments (for example, "
    "split a large file write into several edits)."
)

#: Tool calls of one reply that execute at once unless the caller says otherwise.
DEFAULT_MAX_PARALLEL = 8

# Tool tasks that were cancelled but have not yet unwound; held so they are not collected.
_unwinding: set[asyncio.Task[None]] = set()


@dataclass(slots=True)
class ToolHooks:
    before_tool_call: BeforeToolCall | None = None
    after_tool_call: AfterToolCall | None = None


def error_result(text: str) -> ToolResult:
    return ToolResult.text(text, is_error=True)


def unknown_tool_result(name: str, tools: Sequence[AgentTool]) -> ToolResult:
    available = ", ".join(sorted(tool.name for tool in tools)) or "none"
    return error_result(f"Tool '{name}' not found. Available tools: {available}.")


class _Outcomes:
    """Where tool runs report; the coordinator waits here without a queue per item."""

    __slots__ = ("completed", "finished", "results", "updates", "waiter")

    def __init__(self, count: int) -> None:
        self.results: list[ToolResult | None] = [None] * count
        #: Positions in the order their calls finished.
        self.finished: list[int] = []
        self.completed = 0
        self.updates: deque[tuple[int, ToolResult]] = deque()
        self.waiter: asyncio.Future[None] | None = None

    def finish(self, index: int, result: ToolResult) -> bool:
        if self.results[index] is not None:
            return False
        self.results[index] = result
        self.finished.append(index)
        self.completed += 1
        self._wake()
        return True

    def update(self, index: int, partial: ToolResult) -> None:
        if self.results[index] is None:
            self.updates.append((index, partial))
            self._wake()

    async def wait(self) -> None:
        self.waiter = asyncio.get_running_loop().create_future()
        try:
            await self.waiter
        finally:
            self.waiter = None

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)


class _ToolRun:
    """One call: validate, hooks, execute; settles at once when its signal fires."""

    __slots__ = (
        "call",
        "hooks",
        "index",
        "outcomes",
        "run_signal",
        "signal",
        "slots",
        "task",
        "tool",
    )

    def __init__(
        self,
        index: int,
        call: ToolCall,
        tool: AgentTool,
        hooks: ToolHooks,
        run_signal: AbortSignal,
        steering_signal: AbortSignal,
        outcomes: _Outcomes,
        slots: asyncio.Semaphore,
    ) -> None:
        self.slots = slots
        self.index = index
        self.call = call
        self.tool = tool
        self.hooks = hooks
        self.run_signal = run_signal
        self.signal = AbortSignal.any([run_signal, steering_signal])
        self.outcomes = outcomes
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self.signal.aborted:
            self._settle(self._interrupted_result())
            return
        self.signal.add_callback(self._on_abort)
        self.task = asyncio.get_running_loop().create_task(self._run())

    def _on_abort(self, _reason: Any) -> None:
        self._settle(self._interrupted_result())
        task = self.task
        if task is not None and not task.done():
            task.cancel()
            _unwinding.add(task)
            task.add_done_callback(_unwinding.discard)

    def _interrupted_result(self) -> ToolResult:
        if self.run_signal.aborted:
            return error_result(ABORTED_TOOL_CALL)
        return error_result(SKIPPED_FOR_STEERING)

    def _settle(self, result: ToolResult) -> None:
        if self.outcomes.finish(self.index, result):
            # Unhook from the run signal, which outlives this call.
            self.signal.dispose()

    def _on_update(self, partial: ToolResult) -> None:
        self.outcomes.update(self.index, partial)

    async def _run(self) -> None:
        try:
            result = await self._execute()
        except asyncio.CancelledError:
            # Cancelled by our signal (already settled) or by the loop being torn down.
            self._settle(self._interrupted_result())
            raise
        except Exception as exc:  # a bug in a hook or in validate: still a readable result
            log.exception("tool %s failed outside execute", self.call.name)
            result = error_result(f"{type(exc).__name__}: {exc}")
        self._settle(result)

    async def _execute(self) -> ToolResult:
        call, tool, hooks = self.call, self.tool, self.hooks
        try:
            args = tool.validate(call.arguments)
        except ToolArgumentsError as exc:
            return error_result(str(exc))
        except Exception as exc:
            return error_result(f"Invalid arguments for {call.name}: {exc}")
        if hooks.before_tool_call is not None:
            try:
                reason = await hooks.before_tool_call(call, args)
            except Exception as exc:
                log.exception("before_tool_call hook failed")
                return error_result(f"Tool call blocked: the before_tool_call hook failed: {exc}")
            if reason:
                return error_result(reason)
        try:
            async with self.slots:
                result = await tool.execute(call.id, args, self.signal, self._on_update)
        except ToolError as exc:
            result = ToolResult.text(str(exc), exc.details, is_error=True)
        except Exception as exc:
            text = str(exc)
            result = error_result(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)
        if hooks.after_tool_call is not None:
            try:
                replacement = await hooks.after_tool_call(call, result)
            except Exception:
                log.exception("after_tool_call hook failed; keeping the tool's own result")
                replacement = None
            if replacement is not None:
                result = replacement
        return _repaired(result)


def _repaired(result: ToolResult) -> ToolResult:
    """File names and outputs may carry undecodable bytes as lone surrogates; the result
    goes to the model and into the session file, both UTF-8 only."""
    if not any(isinstance(b, TextContent) and has_surrogates(b.text) for b in result.content):
        return result
    content = [
        TextContent(repair_text(b.text)) if isinstance(b, TextContent) else b
        for b in result.content
    ]
    return ToolResult(content, repair_tree(result.details), result.is_error)


async def execute_tool_calls(
    calls: Sequence[ToolCall],
    *,
    tools: Sequence[AgentTool],
    hooks: ToolHooks,
    run_signal: AbortSignal,
    steering_queued: Callable[[], bool],
    emit: Emit,
    not_run: dict[int, str] | None = None,
    max_parallel: int = DEFAULT_MAX_PARALLEL,
) -> list[ToolResultMessage]:
    """Run ``calls`` concurrently; emit their events; return their result messages in order.

    ``max_parallel``: how many calls may be in their tool's ``execute`` at once; the others
    wait their turn (validation and hooks, approval included, are not held back).
    ``not_run`` maps call positions to an error text: those calls are reported, not run.
    ``steering_queued`` is polled after each call completes; when it says yes, every call
    still running or not started is skipped.
    """
    count = len(calls)
    for call in calls:
        await emit(ToolExecutionStart(call.id, call.name, call.arguments))
    outcomes = _Outcomes(count)
    steering = AbortController()
    by_name = {tool.name: tool for tool in tools}
    slots = asyncio.Semaphore(max(1, max_parallel))
    for index, call in enumerate(calls):
        if not_run and index in not_run:
            outcomes.finish(index, error_result(not_run[index]))
            continue
        tool = by_name.get(call.name)
        if tool is None:
            outcomes.finish(index, unknown_tool_result(call.name, tools))
            continue
        _ToolRun(index, call, tool, hooks, run_signal, steering.signal, outcomes, slots).start()

    messages: list[ToolResultMessage] = []
    ended: list[int] = []
    results = outcomes.results
    # Results known before anything ran (unknown tool, not_run) are not completions.
    polled = outcomes.completed
    try:
        while len(messages) < count:
            while outcomes.updates:
                index, partial = outcomes.updates.popleft()
                if index >= len(messages):  # reported while it ran, and not ended yet
                    call = calls[index]
                    await emit(ToolExecutionUpdate(call.id, call.name, partial))
            if outcomes.completed > polled:
                polled = outcomes.completed
                if (
                    polled < count
                    and not steering.signal.aborted
                    and not run_signal.aborted
                    and steering_queued()
                ):
                    steering.abort("steering")
            emitted_any = False
            # Each call's end as soon as it has one (a front end stops showing it as running
            # while an earlier sibling still runs or waits for approval) ...
            while len(ended) < len(outcomes.finished):
                index = outcomes.finished[len(ended)]
                ended.append(index)
                result, call = results[index], calls[index]
                assert result is not None
                emitted_any = True
                await emit(ToolExecutionEnd(call.id, call.name, result, result.is_error))
            # ... and the result messages in the order the model wrote the calls.
            while len(messages) < count:
                result = results[len(messages)]
                if result is None:
                    break
                call = calls[len(messages)]
                message = ToolResultMessage(
                    call.id, call.name, result.content, result.details, result.is_error
                )
                messages.append(message)
                emitted_any = True
                await emit(MessageStart(message))
                await emit(MessageEnd(message))
            if emitted_any or outcomes.updates or outcomes.completed > polled:
                continue
            if len(messages) < count:
                await outcomes.wait()
    finally:
        if None in results:
            # Torn down from outside (the loop was cancelled): stop whatever still runs.
            steering.abort("cancelled")
    return messages
