"""A running subagent as its parent's tool sees it: one small, JSON-safe state.

The state travels in the ``task`` call's partial results (``ToolExecutionUpdate``) and in
its final result's ``details`` (so the session file keeps it): the description, the tool
the child runs now, tokens, elapsed time and a compact transcript for the expanded view.
Texts are the child's model's own, untrusted: front ends render them escaped.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal

from picode.agent.events import (
    AgentEvent,
    MessageEnd,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
)
from picode.agent.tool import ToolResult
from picode.ai.types import AssistantMessage, TextContent, ToolCall

Status = Literal["starting", "running", "done", "failed", "aborted"]

#: Entries of the transcript kept in the state, and characters per entry: the whole
#: conversation is in the child's own session file.
MAX_ENTRIES = 400
MAX_ENTRY_CHARS = 4000
#: Partial results while the child streams text, at most this often (tool starts and ends,
#: and each finished message, are sent at once).
STREAM_UPDATE_S = 0.25
_KEY_ARGUMENTS = ("path", "command", "pattern")


class ChildProgress:
    """Folds the child session's events into the state and reports it through ``report``."""

    def __init__(
        self,
        description: str,
        agent: str,
        report: Callable[[ToolResult], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.description = description
        self.agent = agent
        self.model = ""
        self.status: Status = "starting"
        self.tool: str | None = None
        self.tool_uses = 0
        self.session_file: str | None = None
        self.usage: dict[str, Any] = {}
        self.transcript: list[list[str]] = []
        self._settled_tokens = 0
        self._live_chars = 0
        self._report = report
        self._clock = clock
        self._started = clock()
        self._last_report = float("-inf")

    @property
    def tokens(self) -> int:
        return self._settled_tokens + self._live_chars // 4

    def on_event(self, event: AgentEvent) -> None:
        match event:
            case MessageUpdate(message=partial):
                self.status = "running"
                self._live_chars = sum(_chars(block) for block in partial.content)
                if self._clock() - self._last_report >= STREAM_UPDATE_S:
                    self.report()
            case MessageEnd(message=AssistantMessage() as message):
                self._live_chars = 0
                usage = message.usage
                self._settled_tokens += (
                    usage.input + usage.output + usage.cache_read + usage.cache_write
                )
                self._add_message(message)
                self.report()
            case ToolExecutionStart(tool_name=name, args=args):
                self.status = "running"
                self.tool = _summary(name, args)
                self.tool_uses += 1
                self.report()
            case ToolExecutionEnd(is_error=is_error):
                if is_error:
                    self._add("error", f"{self.tool or 'tool'} failed")
                self.tool = None
                self.report()
            case _:
                pass

    def tick(self, quiet_s: float) -> None:
        """Report if nothing else did for ``quiet_s`` seconds (the elapsed time moves)."""
        if self._clock() - self._last_report >= quiet_s:
            self.report()

    def report(self) -> None:
        self._last_report = self._clock()
        self._report(ToolResult.text(self.line(), self.details()))

    def line(self) -> str:
        """One line for front ends that show text only (print, rpc)."""
        doing = self.tool or self.status
        return f"{self.agent}: {doing} ({self.tokens} tokens, {self.elapsed:.1f}s)"

    @property
    def elapsed(self) -> float:
        return self._clock() - self._started

    def details(self) -> dict[str, Any]:
        return {
            "subagent": {
                "description": self.description,
                "agent": self.agent,
                "model": self.model,
                "status": self.status,
                "tool": self.tool,
                "tool_uses": self.tool_uses,
                "tokens": self.tokens,
                "elapsed_s": round(self.elapsed, 2),
                "session_file": self.session_file,
                "usage": self.usage,
                "transcript": [list(entry) for entry in self.transcript],
            }
        }

    def _add_message(self, message: AssistantMessage) -> None:
        for block in message.content:
            if isinstance(block, TextContent) and block.text.strip():
                self._add("text", block.text.strip())
            elif isinstance(block, ToolCall):
                self._add("tool", _summary(block.name, block.arguments))
        if message.stop_reason == "error" and message.error_message:
            self._add("error", message.error_message)

    def _add(self, kind: str, text: str) -> None:
        if len(text) > MAX_ENTRY_CHARS:
            text = text[: MAX_ENTRY_CHARS - 1] + "…"
        self.transcript.append([kind, text])
        if len(self.transcript) > MAX_ENTRIES:
            del self.transcript[0]


def _summary(name: str, args: dict[str, Any]) -> str:
    """``read src/app.py``: the tool and the argument that says what it is about."""
    value = next((args[key] for key in _KEY_ARGUMENTS if isinstance(args.get(key), str)), None)
    if value is None:
        value = next((v for v in args.values() if isinstance(v, str) and v.strip()), "")
    first = value.strip().split("\n", 1)[0]
    return f"{name} {first[:200]}".rstrip()


def _chars(block: object) -> int:
    if isinstance(block, TextContent):
        return len(block.text)
    text = getattr(block, "thinking", None)
    return len(text) if isinstance(text, str) else 0


def subagent_state(details: object) -> dict[str, Any] | None:
    """The state in a ``task`` result's details, if that is what they hold."""
    if isinstance(details, dict):
        state = details.get("subagent")
        if isinstance(state, dict):
            return state
    return None
