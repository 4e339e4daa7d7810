"""History replay helpers shared by the provider modules.

A session's history may come from several providers and may hold the debris of failures
(an aborted turn, a tool call whose result never arrived). Before a provider converts it to
its wire format, ``prepare_history`` makes it well formed for every API; the smaller helpers
decide what each block becomes on the other side of a provider switch.

Nothing here mutates the messages it is given: sessions share those objects.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from picode.ai.models import Model
from picode.ai.types import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserContent,
    UserMessage,
)

#: Text of the error result synthesised for a tool call that never got one.
SYNTHETIC_RESULT_TEXT = "No result provided"

_ID_DISALLOWED = re.compile(r"[^A-Za-z0-9_-]")


def same_model(message: AssistantMessage, model: Model) -> bool:
    """True when ``message`` was produced by ``model`` through the same API.

    Only then are opaque artefacts (thinking signatures, redacted reasoning, encrypted
    content) meaningful to the server; anything else must be replayed as plain content.
    """
    return (
        message.provider == model.provider
        and message.api == model.api
        and message.model == model.id
    )


def sanitize_tool_call_id(call_id: str, *, max_length: int = 64) -> str:
    """Map ``call_id`` onto ``^[A-Za-z0-9_-]{1,max_length}$``, deterministically.

    The same input always gives the same output, so a call and its result stay paired
    without keeping a table. Composite OpenAI Responses ids (``"<call_id>|<item_id>"``)
    keep their call part, which is already unique in a conversation. Ids that must be
    shortened get a hash suffix so two long ids sharing a prefix stay distinct.
    """
    head, bar, _tail = call_id.partition("|")
    candidate = head if bar and head else call_id
    cleaned = _ID_DISALLOWED.sub("_", candidate)
    if cleaned and len(cleaned) <= max_length:
        return cleaned
    digest = hashlib.sha256(call_id.encode("utf-8")).hexdigest()[:10]
    if not cleaned:
        return f"call_{digest}"[:max_length]
    keep = max(1, max_length - len(digest) - 1)
    return f"{cleaned[:keep]}_{digest}"[:max_length]


def has_content(message: AssistantMessage) -> bool:
    """Whether an assistant message carries anything worth replaying."""
    for block in message.content:
        if isinstance(block, TextContent) and block.text.strip():
            return True
        if isinstance(block, ThinkingContent) and (
            block.thinking.strip() or block.thinking_signature
        ):
            return True
        if isinstance(block, ToolCall):
            return True
    return False


def thinking_as_text(block: ThinkingContent) -> TextContent | None:
    """What a thinking block becomes for a model that cannot verify it: its text, or
    nothing when there is no readable text (redacted or empty reasoning)."""
    if block.redacted or not block.thinking.strip():
        return None
    return TextContent(block.thinking)


def user_blocks(content: str | Sequence[UserContent]) -> list[UserContent]:
    """User or tool-result content as a list of blocks."""
    if isinstance(content, str):
        return [TextContent(content)]
    return list(content)


def accepts_images(model: Model) -> bool:
    return "image" in model.input


def without_images(blocks: Sequence[UserContent], model: Model) -> list[UserContent]:
    """Replace images with a short note when ``model`` cannot read them."""
    if accepts_images(model):
        return list(blocks)
    return [
        TextContent("(image omitted: this model does not accept images)")
        if isinstance(block, ImageContent)
        else block
        for block in blocks
    ]


def prepare_history(
    messages: Sequence[Message],
    *,
    normalize_id: Callable[[str], str] | None = None,
) -> list[Message]:
    """A copy of ``messages`` that every API accepts.

    - Assistant messages that failed (``error``/``aborted``) without any content are
      dropped; failed messages with content are kept as they are.
    - Tool call ids pass through ``normalize_id`` on the call and on its result alike.
    - Right after an assistant message with tool calls come exactly its results, in call
      order; a call without one gets an error result (``SYNTHETIC_RESULT_TEXT``). User
      messages that arrived before the last result move after the results.
    - A result whose call is not in the preceding assistant message becomes a user
      message with its text, so nothing the tool returned is lost.
    """
    normalize = normalize_id or (lambda call_id: call_id)
    out: list[Message] = []
    pending: dict[str, ToolCall] = {}
    results: dict[str, ToolResultMessage] = {}
    deferred: list[Message] = []

    def flush() -> None:
        for call_id, call in pending.items():
            result = results.get(call_id)
            out.append(result if result is not None else synthetic_result(call))
        out.extend(deferred)
        pending.clear()
        results.clear()
        deferred.clear()

    for message in messages:
        if isinstance(message, AssistantMessage):
            flush()
            if message.stop_reason in ("error", "aborted") and not has_content(message):
                continue
            message = _with_normalized_calls(message, normalize)
            out.append(message)
            for call in message.tool_calls:
                pending.setdefault(call.id, call)
        elif isinstance(message, ToolResultMessage):
            call_id = normalize(message.tool_call_id)
            if call_id in pending and call_id not in results:
                if call_id != message.tool_call_id:
                    message = replace(message, tool_call_id=call_id)
                results[call_id] = message
            else:
                (deferred if pending else out).append(_orphan_result_as_user(message))
        else:
            (deferred if pending else out).append(message)
    flush()
    return out


def synthetic_result(call: ToolCall) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call.id,
        tool_name=call.name,
        content=[TextContent(SYNTHETIC_RESULT_TEXT)],
        is_error=True,
    )


def _with_normalized_calls(
    message: AssistantMessage, normalize: Callable[[str], str]
) -> AssistantMessage:
    changed = False
    content: list[TextContent | ThinkingContent | ToolCall] = []
    for block in message.content:
        if isinstance(block, ToolCall):
            call_id = normalize(block.id)
            if call_id != block.id:
                block = replace(block, id=call_id)
                changed = True
        content.append(block)
    return replace(message, content=content) if changed else message


def _orphan_result_as_user(message: ToolResultMessage) -> UserMessage:
    note = f"(Result of the '{message.tool_name}' tool; its call is no longer in the history)"
    blocks: list[UserContent] = [TextContent(note), *message.content]
    return UserMessage(blocks, message.timestamp)


def object_schema(parameters: dict[str, Any]) -> dict[str, Any]:
    """A tool's parameters as an object schema, which the Anthropic and Responses APIs
    require of ``input_schema``/``parameters``."""
    if parameters.get("type") == "object":
        return parameters
    return {"properties": {}, **parameters, "type": "object"}
