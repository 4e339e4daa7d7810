"""Compaction: measure the context, pick where to cut, summarise the older part (docs/sessions.md).

The session decides *when* (``should_compact``) and rewrites its context; this module only
measures, chooses the cut and asks the model for the summary. The cut never separates a tool
call from its results, because every provider rejects a tool result whose call is missing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from picode.ai.builder import message_chars, tokens_for_chars
from picode.ai.models import Model
from picode.ai.options import StreamOptions
from picode.ai.stream import stream_simple
from picode.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolResultMessage,
    UserMessage,
)
from picode.session.store.format import is_compaction_summary

TOOL_ARGS_LIMIT = 500
TOOL_RESULT_LIMIT = 2000
THINKING_LIMIT = 2000

READ_TOOLS = frozenset({"read"})
MODIFY_TOOLS = frozenset({"write", "edit"})


class CompactionError(Exception):
    """The summary could not be produced; the message says why (model error, abort, empty).
    ``reply``: what the model did answer, whose usage was spent all the same."""

    def __init__(self, message: str, reply: AssistantMessage | None = None) -> None:
        super().__init__(message)
        self.reply = reply


# --- measuring -----------------------------------------------------------------------------


def estimate_message_tokens(message: Message) -> int:
    return tokens_for_chars(message_chars(message))


def _has_real_usage(message: AssistantMessage) -> bool:
    # Usage the builder estimated for a provider that reports none still counts: it covers
    # the system prompt and tool definitions, which the messages alone do not show.
    usage = message.usage
    if message.stop_reason in ("error", "aborted"):
        return False
    return usage.input + usage.cache_read + usage.cache_write + usage.output > 0


def context_tokens(messages: Sequence[Message]) -> int:
    """Tokens the next request will occupy.

    The last assistant message that completed (not an error or abort) with usage tells what
    the context held up to it; later messages are estimated. After a compaction, usage is
    only taken from replies newer than the summary: the kept messages' usage describes the
    context before it, which no longer exists.
    """
    first_trusted, newer_than = 0, -1
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, UserMessage) and is_compaction_summary(message):
            first_trusted, newer_than = index + 1, message.timestamp
            break
    for index in range(len(messages) - 1, first_trusted - 1, -1):
        message = messages[index]
        if (
            isinstance(message, AssistantMessage)
            and message.timestamp > newer_than
            and _has_real_usage(message)
        ):
            usage = message.usage
            measured = usage.input + usage.cache_read + usage.cache_write + usage.output
            return measured + sum(estimate_message_tokens(m) for m in messages[index + 1 :])
    return sum(estimate_message_tokens(m) for m in messages)


def compaction_threshold(context_window: int, reserve_tokens: int) -> int:
    """Automatic compaction starts when the context holds more tokens than this."""
    return context_window - reserve_tokens


def should_compact(tokens: int, context_window: int, reserve_tokens: int) -> bool:
    return tokens > compaction_threshold(context_window, reserve_tokens)


# --- choosing the cut ----------------------------------------------------------------------


def valid_cut_indices(messages: Sequence[Message]) -> list[bool]:
    """``result[i]``: may the kept tail start at ``messages[i]``?

    Only at a user or assistant message, and only where no tool call before ``i`` has its
    result at ``i`` or later.
    """
    result_at: dict[str, int] = {}
    for index, message in enumerate(messages):
        if isinstance(message, ToolResultMessage):
            result_at[message.tool_call_id] = index
    valid: list[bool] = []
    pending_until = -1  # the last index holding a result of a call seen so far
    for index, message in enumerate(messages):
        boundary = isinstance(message, UserMessage | AssistantMessage)
        valid.append(boundary and pending_until < index)
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                pending_until = max(pending_until, result_at.get(call.id, -1))
    return valid


def find_cut_index(messages: Sequence[Message], keep_recent_tokens: int) -> int | None:
    """Index of the first message to keep, or None when there is nothing worth summarising.

    The kept tail holds about ``keep_recent_tokens``: the nearest valid cut at or after the
    point where the tail reaches that size (so compaction frees room), else the nearest valid
    cut before it (a single turn bigger than the budget). A compaction summary at the start
    is never the only message before the cut.
    """
    count = len(messages)
    if count < 2:
        return None
    total = 0
    threshold: int | None = None
    for index in range(count - 1, -1, -1):
        total += estimate_message_tokens(messages[index])
        if total >= keep_recent_tokens:
            threshold = index
            break
    if threshold is None:
        return None
    # Behind an earlier summary there must be at least one message to fold into it.
    first = 2 if is_compaction_summary(messages[0]) else 1
    valid = valid_cut_indices(messages)
    for index in range(max(threshold, first), count):
        if valid[index]:
            return index
    for index in range(threshold - 1, first - 1, -1):
        if valid[index]:
            return index
    return None


def message_tokens(messages: Sequence[Message]) -> int:
    """The messages' own estimated size (what a compaction could summarise)."""
    return sum(estimate_message_tokens(message) for message in messages)


def smaller_tail(messages: Sequence[Message]) -> int | None:
    """A ``keep_recent_tokens`` small enough that something is summarised (a round number:
    the person types it), or None when no tail would leave anything before it."""
    keep = message_tokens(messages) // 2 // 1000 * 1000  # about half, in thousands
    candidates: list[int] = []
    while keep >= 1000:
        candidates.append(keep)
        keep = keep // 2 // 1000 * 1000
    for keep in [*candidates, 500, 200, 100]:
        cut = find_cut_index(messages, keep)
        if cut is not None and cut > 0:
            return keep
    return None


def nothing_to_compact(messages: Sequence[Message], keep_recent_tokens: int) -> str:
    """Why a manual compaction had nothing to summarise, and what would work instead."""
    total = message_tokens(messages)
    why = (
        f"Nothing to compact: the last ~{keep_recent_tokens:,} tokens are kept verbatim "
        f"(keep_recent_tokens) and the conversation is ~{total:,} tokens."
    )
    keep = smaller_tail(messages)
    if keep is None:
        return f"{why} There is no earlier turn to summarise yet."
    return f"{why} /compact --keep {keep} keeps a smaller tail and summarises the rest."


def file_operations(
    messages: Sequence[Message],
    previous: tuple[list[str], list[str]] = ([], []),
) -> tuple[list[str], list[str]]:
    """Cumulative ``(read_files, modified_files)`` from read/write/edit calls' ``path``."""
    read: dict[str, None] = dict.fromkeys(previous[0])
    modified: dict[str, None] = dict.fromkeys(previous[1])
    for message in messages:
        if not isinstance(message, AssistantMessage):
            continue
        for call in message.tool_calls:
            path = call.arguments.get("path")
            if not isinstance(path, str) or not path.strip():
                continue
            if call.name in READ_TOOLS:
                read.setdefault(path.strip(), None)
            elif call.name in MODIFY_TOOLS:
                modified.setdefault(path.strip(), None)
    return list(read), list(modified)


# --- summarising ---------------------------------------------------------------------------

SUMMARY_SYSTEM_PROMPT = (
    "You summarise a conversation between a person and a coding assistant so that the "
    "assistant can continue the work from the summary alone. You never continue the "
    "conversation or answer questions in it; you only write the summary."
)

SUMMARY_PROMPT = """\
Write a structured summary of the conversation above so the work can continue without it.
Be concrete: exact file paths, function names, commands, error messages and numbers. Keep it
as short as the content allows. Use exactly these sections, in Markdown:

## Goal
What the person wants overall (several goals if there are several).

## Constraints & Preferences
Requirements, conventions and preferences they stated or that were discovered.

## Progress
### Done
- Completed work, with files touched.
### In Progress
- Work started but not finished.
### Blocked
- Problems not yet solved, with the exact error.

## Key Decisions
- Decisions taken and why.

## Next Steps
1. What to do next, in order.

## Critical Context
Anything else needed to continue: data, examples, references, open questions.

## Files
- Read: paths read.
- Modified: paths created or changed.
"""

UPDATE_NOTE = (
    "A summary of the earlier part of this conversation is in <previous-summary>. Merge it "
    "with the new conversation into one updated summary: keep what still holds, move "
    "finished items to Done, drop what is obsolete."
)

StreamFn = Callable[..., Any]


def _dump(arguments: Any) -> str:
    try:
        return json.dumps(arguments, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(arguments)


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters]"


def _user_text(message: UserMessage | ToolResultMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    parts = [
        block.text if isinstance(block, TextContent) else "[image]"
        for block in content
        if isinstance(block, TextContent | ImageContent)
    ]
    return "\n".join(parts)


def serialize_for_summary(messages: Sequence[Message]) -> str:
    """Role-labelled plain text of the conversation; bulky parts are truncated."""
    parts: list[str] = []
    for message in messages:
        if isinstance(message, UserMessage):
            parts.append(f"[User]: {_user_text(message)}")
        elif isinstance(message, ToolResultMessage):
            label = f"{message.tool_name} (error)" if message.is_error else message.tool_name
            text = _truncate(_user_text(message), TOOL_RESULT_LIMIT)
            parts.append(f"[Tool result: {label}]: {text}")
        else:
            parts.extend(_assistant_parts(message))
    return "\n\n".join(parts)


def _assistant_parts(message: AssistantMessage) -> list[str]:
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            if block.thinking.strip() and not block.redacted:
                thinking = _truncate(block.thinking, THINKING_LIMIT)
                parts.append(f"[Assistant thinking]: {thinking}")
        elif isinstance(block, TextContent):
            if block.text.strip():
                parts.append(f"[Assistant]: {block.text}")
        else:
            arguments = _truncate(_dump(block.arguments), TOOL_ARGS_LIMIT)
            parts.append(f"[Assistant tool call]: {block.name}({arguments})")
    if message.stop_reason in ("error", "aborted"):
        what = "aborted" if message.stop_reason == "aborted" else "failed"
        detail = f": {message.error_message}" if message.error_message else ""
        parts.append(f"[Assistant response {what}{detail}]")
    return parts


def summary_request(
    messages: Sequence[Message], previous_summary: str | None, instructions: str | None
) -> str:
    """The single user message sent to the model."""
    sections = [f"<conversation>\n{serialize_for_summary(messages)}\n</conversation>"]
    if previous_summary and previous_summary.strip():
        sections.append(f"<previous-summary>\n{previous_summary.strip()}\n</previous-summary>")
        sections.append(UPDATE_NOTE)
    sections.append(SUMMARY_PROMPT.rstrip())
    if instructions and instructions.strip():
        sections.append(f"Additional instructions for this summary: {instructions.strip()}")
    return "\n\n".join(sections)


async def summarize(
    model: Model,
    messages: Sequence[Message],
    *,
    previous_summary: str | None,
    instructions: str | None,
    stream_fn: StreamFn = stream_simple,
    options: StreamOptions,
) -> tuple[str, AssistantMessage]:
    """Ask ``model`` for the summary; the summary and the reply it came in (its usage is the
    session's spend too). Raises ``CompactionError`` if none comes back."""
    request = summary_request(messages, previous_summary, instructions)
    context = Context(system_prompt=SUMMARY_SYSTEM_PROMPT, messages=[UserMessage(request)])
    try:
        stream = stream_fn(model, context, options)
        reply: AssistantMessage = await stream.result()
    except Exception as exc:  # a provider that fails outside its stream
        raise CompactionError(f"Summarising failed: {exc}") from exc
    if reply.stop_reason == "aborted":
        raise CompactionError("Summarising was aborted", reply)
    if reply.stop_reason == "error":
        message = f"Summarising failed: {reply.error_message or 'model error'}"
        raise CompactionError(message, reply)
    text = reply.text.strip()
    if not text:
        raise CompactionError("Summarising failed: the model returned no text", reply)
    return text, reply
