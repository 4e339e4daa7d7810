"""The streaming edit guard (docs/stream-rules.md): watch streamed tool calls and stop a doomed one.

The session only watches the deltas. Judging belongs to the tool: one that offers a
``streaming_check`` (the edit tool does, tools/edit_check.py) is asked after each delta of
its call, and a verdict lets the session abort the stream and give the model the tool's
error at once instead of waiting for the whole call to fail.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from picode.agent.tool import AgentTool, ChecksStreamedArguments, EarlyVerdict, StreamingCheck
from picode.ai.events import AssistantMessageEvent, ToolCallDeltaEvent
from picode.ai.types import ToolCall

__all__ = ["EarlyVerdict", "EditGuard"]


class EditGuard:
    def __init__(self, tools: Callable[[], Sequence[AgentTool]]) -> None:
        #: The tools the model can call now (they may change between turns).
        self._tools = tools
        self._checks: dict[str, StreamingCheck] = {}
        self._stopped: set[int] = set()

    def reset(self) -> None:
        """Call at each new assistant message: files may have changed since the last one."""
        self._checks = {}
        self._stopped = set()

    def feed(self, event: AssistantMessageEvent) -> EarlyVerdict | None:
        if not isinstance(event, ToolCallDeltaEvent):
            return None
        index = event.content_index
        content = event.partial.content
        if index in self._stopped or index >= len(content):
            return None
        call = content[index]
        if not isinstance(call, ToolCall):
            return None
        check = self._check_for(call.name)
        if check is None:
            return None
        earlier = [(b.name, b.arguments) for b in content[:index] if isinstance(b, ToolCall)]
        verdict = check.check(index, call.arguments, earlier)
        if verdict is not None:
            self._stopped.add(index)
        return verdict

    def _check_for(self, name: str) -> StreamingCheck | None:
        check = self._checks.get(name)
        if check is None:
            tool = next((tool for tool in self._tools() if tool.name == name), None)
            if not isinstance(tool, ChecksStreamedArguments):
                return None
            check = self._checks[name] = tool.streaming_check()
        return check
