"""What fills the model's context, for ``/context``: the system prompt and its parts, the
tool definitions, and the conversation by kind.

The total in use is the session's own measure (``context_tokens``: the last reply's
reported usage, later messages estimated). The parts are estimated at four characters a
token, as picode estimates everywhere (``ai.builder.tokens_for_chars``): they tell where
the room went, not what a provider's tokenizer would count.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from picode.agent.tool import AgentTool
from picode.ai.builder import message_chars, tokens_for_chars
from picode.ai.types import (
    AssistantMessage,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

#: The tool results listed by size.
LARGEST_RESULTS = 3


@dataclass(frozen=True, slots=True)
class ContextShare:
    label: str
    tokens: int


@dataclass(frozen=True, slots=True)
class LargeResult:
    """A tool result among the largest: the call it answers, and its size."""

    tool: str
    arguments: dict[str, Any]
    tokens: int


@dataclass(frozen=True, slots=True)
class ContextUsage:
    window: int
    #: What the next request will hold, as the session measures it.
    in_use: int
    #: Estimated parts, in the order a request carries them.
    shares: tuple[ContextShare, ...]
    largest: tuple[LargeResult, ...]
    #: Automatic compaction starts above this many tokens; None: it is off.
    compacts_at: int | None


def measure_context(
    *,
    system_prompt: str,
    prompt_parts: Sequence[tuple[str, str]],
    tools: Sequence[AgentTool],
    messages: Sequence[Message],
    window: int,
    in_use: int,
    compacts_at: int | None,
) -> ContextUsage:
    """``prompt_parts``: (label, text) of the parts of ``system_prompt`` worth naming (the
    context files, the skills list); a part the prompt no longer holds is left out."""
    shares: list[ContextShare] = []
    rest = len(system_prompt)
    named: list[ContextShare] = []
    for label, text in prompt_parts:
        if text and text in system_prompt:
            named.append(ContextShare(label, tokens_for_chars(len(text))))
            rest -= len(text)
    shares.append(ContextShare("picode's instructions", tokens_for_chars(max(rest, 0))))
    shares += named
    schemas = sum(
        len(tool.name) + len(tool.description) + len(json.dumps(tool.parameters)) for tool in tools
    )
    shares.append(ContextShare(f"tool definitions ({len(tools)})", tokens_for_chars(schemas)))
    chars = {"your messages": 0, "replies": 0, "thinking": 0, "tool calls": 0, "tool results": 0}
    calls: dict[str, ToolCall] = {}
    results: list[LargeResult] = []
    for message in messages:
        if isinstance(message, UserMessage):
            chars["your messages"] += message_chars(message)
        elif isinstance(message, ToolResultMessage):
            size = message_chars(message)
            chars["tool results"] += size
            call = calls.get(message.tool_call_id)
            arguments = call.arguments if call is not None else {}
            results.append(LargeResult(message.tool_name, arguments, tokens_for_chars(size)))
        elif isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, TextContent):
                    chars["replies"] += len(block.text)
                elif isinstance(block, ThinkingContent):
                    chars["thinking"] += len(block.thinking)
                elif isinstance(block, ToolCall):
                    calls[block.id] = block
                    chars["tool calls"] += len(block.name) + len(json.dumps(block.arguments))
    shares += [ContextShare(label, tokens_for_chars(size)) for label, size in chars.items()]
    largest = sorted(results, key=lambda result: result.tokens, reverse=True)[:LARGEST_RESULTS]
    return ContextUsage(window, in_use, tuple(shares), tuple(largest), compacts_at)
