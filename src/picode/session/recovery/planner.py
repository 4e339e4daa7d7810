"""What happens between agent runs: retry, compaction, stream rules and the edit guard.

The Agent only knows "run until you stop". The planner watches the stream while it runs
(rules and the edit guard may interrupt it), and when the agent stops it decides whether to
go on: retry a transient failure after a back-off, compact and retry after a context
overflow, re-run the turn with a rule's reminder, or hand the model a precise edit error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from picode.agent.events import MessageUpdate
from picode.ai.abort import AbortController
from picode.ai.errors import is_context_overflow, without_retry_after
from picode.ai.types import (
    AssistantMessage,
    Message,
    TextContent,
    ToolCall,
    ToolResultMessage,
)
from picode.session.events import (
    RETRY_CANCELLED,
    RETRY_SUPERSEDED,
    AutoRetryEnd,
    AutoRetryStart,
    CompactionEnd,
    CompactionStart,
    EditGuardAbort,
    RuleTriggered,
)
from picode.session.recovery.compaction import (
    CompactionError,
    context_tokens,
    file_operations,
    find_cut_index,
    nothing_to_compact,
    should_compact,
    summarize,
)
from picode.session.recovery.edit_guard import EarlyVerdict, EditGuard
from picode.session.recovery.retry import RetryPolicy
from picode.session.recovery.rules import Rule, RuleMatcher, reminder_message
from picode.session.store.sessions import compaction_summary_message, is_compaction_summary

if TYPE_CHECKING:
    from picode.agent.agent import Agent
    from picode.ai.models import Model
    from picode.ai.options import StreamOptions
    from picode.session.config.settings import Settings
    from picode.session.events import AnySessionEvent

CompactionReason = Literal["threshold", "overflow", "manual"]

NOT_RUN_AFTER_GUARD = (
    "Not run: a later edit call in the same message failed validation. Call it again if it "
    "is still needed."
)


@dataclass(slots=True)
class _Interrupt:
    index: int  # where the interrupted assistant message sits in the context
    rule: Rule | None = None
    verdict: EarlyVerdict | None = None
    content_index: int = 0


class RecoveryHost(Protocol):
    """What the planner needs from the session it serves: a voice, and a clock to wait on."""

    async def emit(self, event: AnySessionEvent) -> None: ...

    def emit_soon(self, event: AnySessionEvent) -> None: ...

    def notify(self, text: str, level: str = "info", source: str | None = None) -> None: ...

    @property
    def has_queued_messages(self) -> bool:
        """Steering or follow-ups wait: they replace a pending retry."""
        ...

    async def wait_retry(self, delay_ms: int) -> bool:
        """Sleep before a retry; False when aborted in the meantime."""
        ...

    def spend(self, reply: AssistantMessage | None) -> dict[str, Any]:
        """Count a request the session made of its own (a summary) in its usage; the
        running total, for the session file."""
        ...

    def todo_list(self) -> str:
        """The model's todo list as text, for the summary ("" when there is none)."""
        ...


class Journal(Protocol):
    """The session file, as far as recovery writes to it (``SessionRecorder``)."""

    def record_message(self, message: Message) -> str | None: ...

    def record_custom(self, custom_type: str, data: Any) -> None: ...

    def record_compaction(
        self, summary: str, first_kept: Message, tokens_before: int, details: dict[str, Any]
    ) -> None: ...

    def last_compaction_details(self) -> dict[str, Any]: ...


@dataclass(slots=True, frozen=True)
class RequestSeams:
    """How compaction reaches the model: the session's stream function and options."""

    stream_fn: Callable[..., Any]
    stream_options: Callable[[Model], StreamOptions]


class RecoveryPlanner:
    def __init__(
        self,
        agent: Agent,
        host: RecoveryHost,
        journal: Journal,
        settings: Settings,
        requests: RequestSeams,
        rules: Sequence[Rule],
        fired: Sequence[str],
    ):
        self.agent = agent
        self.host = host
        self.journal = journal
        self.settings = settings
        self.requests = requests
        self.retry = RetryPolicy(
            enabled=settings.retry.enabled,
            max_retries=settings.retry.max_retries,
            base_delay_ms=settings.retry.base_delay_ms,
            max_delay_ms=settings.retry.max_delay_ms,
        )
        self.rules = list(rules)
        self.matcher = RuleMatcher(self.rules, fired)
        self.guard = EditGuard(lambda: agent.state.tools)
        self._interrupt: _Interrupt | None = None
        self._cancelled = False
        self._compaction_abort: AbortController | None = None

    def reset(self, fired: Sequence[str]) -> None:
        self.matcher = RuleMatcher(self.rules, fired)
        self._interrupt = None

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        """The user pressed Esc: no more retries or re-runs in this run."""
        self._cancelled = True
        self._interrupt = None
        if self._compaction_abort is not None:
            self._compaction_abort.abort("user")

    # --- while streaming ----------------------------------------------------------------

    def on_assistant_start(self) -> None:
        self.matcher.reset_buffers()
        self.guard.reset()

    def on_update(self, update: MessageUpdate) -> None:
        if self._interrupt is not None or self._cancelled:
            return
        settings = self.settings
        event = update.event
        # Finished messages only: the one streaming now will land at this index.
        index = len(self.agent.state.messages)
        if settings.ttsr.enabled and self.rules:
            rule = self.matcher.feed(event)
            if rule is not None:
                self._interrupt = _Interrupt(index, rule=rule)
                self.journal.record_custom("ttsr_fired", {"rule": rule.name})
                self.host.emit_soon(RuleTriggered(rule.name, ",".join(rule.scopes)))
                self.agent.abort("rule")
                return
        if settings.edit_guard.enabled:
            verdict = self.guard.feed(event)
            if verdict is not None:
                content_index = getattr(event, "content_index", 0)
                self._interrupt = _Interrupt(index, verdict=verdict, content_index=content_index)
                self.host.emit_soon(EditGuardAbort(verdict.subject, verdict.reason))
                self.agent.abort("edit_guard")

    def keep_message(self, message: Message) -> bool:
        """Messages of an interrupted turn are rewritten or dropped, not recorded as-is."""
        return self._interrupt is None

    # --- between runs -------------------------------------------------------------------

    async def before_run(self) -> None:
        self._cancelled = False
        self._interrupt = None
        await self.maybe_compact_for_threshold()

    async def after_run(self) -> None:
        attempt = 0
        overflow_compacted = False
        agent = self.agent
        while not self._cancelled:
            interrupt = self._interrupt
            if interrupt is not None:
                self._interrupt = None
                self._apply_interrupt(interrupt)
                await agent.continue_()
                continue
            last = agent.state.messages[-1] if agent.state.messages else None
            if not isinstance(last, AssistantMessage) or last.stop_reason != "error":
                if attempt:
                    await self.host.emit(AutoRetryEnd(True, attempt))
                if isinstance(last, AssistantMessage) and last.stop_reason != "aborted":
                    await self.maybe_compact_for_threshold()
                return
            model = agent.state.model
            overflow = is_context_overflow(last.error_message) or (
                last.usage.input > model.context_window and not last.usage.estimated
            )
            if overflow and not overflow_compacted and self.settings.compaction.enabled:
                overflow_compacted = True
                self._drop_last_failure()
                if not await self.compact("overflow"):
                    return
                await agent.continue_()
                continue
            attempt += 1
            if not self.retry.should_retry(last, attempt):
                if attempt > 1:
                    final = last.error_message and without_retry_after(last.error_message)
                    await self.host.emit(AutoRetryEnd(False, attempt - 1, final))
                return
            delay = self.retry.delay_ms(last, attempt)
            # The event's delay is the wait picode keeps; the server's own hint would
            # contradict it whenever the back-off is longer.
            error = without_retry_after(last.error_message or "")
            await self.host.emit(AutoRetryStart(attempt, self.retry.max_retries, delay, error))
            self._drop_last_failure()
            # A listener may have aborted on AutoRetryStart itself, before the wait began.
            # (It may also have queued a message there: that replaces the retry too.)
            waited = (
                not self._cancelled
                and not self.host.has_queued_messages
                and await self.host.wait_retry(delay)
            )
            if self._cancelled:
                await self.host.emit(AutoRetryEnd(False, attempt, RETRY_CANCELLED))
                return
            if not waited:
                # A message typed during the wait: it goes out now (the session's run loop
                # sends what is queued), as a new request counted from attempt 1.
                await self.host.emit(
                    AutoRetryEnd(False, attempt, RETRY_SUPERSEDED, superseded=True)
                )
                return
            await agent.continue_()

    def _drop_last_failure(self) -> None:
        messages = self.agent.state.messages
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if isinstance(message, AssistantMessage) and message.stop_reason == "error":
                self.agent.replace_messages(messages[:index])
                return

    def _apply_interrupt(self, interrupt: _Interrupt) -> None:
        agent, journal = self.agent, self.journal
        messages = agent.state.messages
        partial = messages[interrupt.index] if interrupt.index < len(messages) else None
        kept = messages[: interrupt.index]
        if interrupt.rule is not None:
            reminder = reminder_message(interrupt.rule)
            journal.record_message(reminder)
            agent.replace_messages([*kept, reminder])
            return
        verdict = interrupt.verdict
        assert verdict is not None
        if not isinstance(partial, AssistantMessage):
            agent.replace_messages(kept)
            return
        content = partial.content[: interrupt.content_index + 1]
        fixed = AssistantMessage(
            content=[block for block in content if not _empty_text(block)],
            api=partial.api,
            provider=partial.provider,
            model=partial.model,
            usage=partial.usage,
            stop_reason="toolUse",
            timestamp=partial.timestamp,
        )
        results: list[Message] = []
        for call in fixed.tool_calls:
            guarded = call is content[-1]
            text = verdict.tool_message if guarded else NOT_RUN_AFTER_GUARD
            results.append(ToolResultMessage(call.id, call.name, [TextContent(text)], None, True))
        for message in [fixed, *results]:
            journal.record_message(message)
        agent.replace_messages([*kept, fixed, *results])

    # --- compaction ---------------------------------------------------------------------

    async def maybe_compact_for_threshold(self) -> None:
        settings = self.settings.compaction
        if not settings.enabled:
            return
        state = self.agent.state
        tokens = context_tokens(state.messages)
        if should_compact(tokens, state.model.context_window, settings.reserve_tokens):
            await self.compact("threshold")

    async def compact(
        self,
        reason: CompactionReason,
        instructions: str | None = None,
        keep_recent_tokens: int | None = None,
    ) -> bool:
        """``keep_recent_tokens``: the verbatim tail for this compaction (default: the
        ``[compaction]`` setting)."""
        agent, journal = self.agent, self.journal
        model = agent.state.model
        messages = list(agent.state.messages)
        keep = keep_recent_tokens or self.settings.compaction.keep_recent_tokens
        cut = find_cut_index(messages, keep)
        if cut is None or cut <= 0:
            if reason == "manual":
                self.host.notify(nothing_to_compact(messages, keep), "info")
            return reason != "overflow"
        await self.host.emit(CompactionStart(reason))
        previous = messages[0] if messages and is_compaction_summary(messages[0]) else None
        to_summarise = messages[1:cut] if previous is not None else messages[:cut]
        tokens_before = context_tokens(messages)
        controller = self._compaction_abort = AbortController()
        options = self.requests.stream_options(model)
        options.signal = controller.signal
        try:
            summary, reply = await summarize(
                model,
                to_summarise,
                previous_summary=previous.text if previous is not None else None,
                instructions=instructions,
                stream_fn=self.requests.stream_fn,
                options=options,
            )
        except CompactionError as exc:
            self.host.spend(exc.reply)
            await self.host.emit(
                CompactionEnd(reason, None, tokens_before, controller.signal.aborted, str(exc))
            )
            return False
        finally:
            self._compaction_abort = None
        details = journal.last_compaction_details()
        read, modified = file_operations(
            to_summarise,
            (list(details.get("read_files", [])), list(details.get("modified_files", []))),
        )
        full_summary = _with_files(summary, read, modified, self.host.todo_list())
        kept = messages[cut:]
        total = self.host.spend(reply)
        journal.record_compaction(
            full_summary,
            kept[0],
            tokens_before,
            {"read_files": read, "modified_files": modified, "usage": total},
        )
        agent.replace_messages([compaction_summary_message(full_summary), *kept])
        await self.host.emit(CompactionEnd(reason, full_summary, tokens_before))
        return True


def _with_files(summary: str, read: list[str], modified: list[str], todos: str = "") -> str:
    parts = [summary.strip()]
    if read:
        parts.append("Files read:\n" + "\n".join(f"- {path}" for path in read))
    if modified:
        parts.append("Files modified:\n" + "\n".join(f"- {path}" for path in modified))
    if todos:
        parts.append(todos)
    return "\n\n".join(parts)


def _empty_text(block: TextContent | ToolCall | object) -> bool:
    return isinstance(block, TextContent) and not block.text.strip()
