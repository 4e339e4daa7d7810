"""Running one subagent: a child ``AgentSession`` in this process (docs/subagents.md).

The child starts from a fresh context: the parent's system prompt rules and AGENTS.md (its
own session builds them the same way), the definition's instructions, none of the parent's
messages. It gets the parent's tools the definition names (never ``task``: one level deep),
the parent's approval gate (so its asks reach the same approver, and "always" holds for
both), the parent's model unless the definition names one, and the parent's way to the
provider. Its usage counts in the parent's as each reply ends; its transcript is saved as a
session of its own and linked from the parent's file by a ``subagent`` entry.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from picode.agent.events import MessageEnd
from picode.agent.tool import AgentTool, OnUpdate, ToolError, ToolResult
from picode.ai.abort import AbortSignal
from picode.ai.types import AssistantMessage, TextContent
from picode.session.safety.approval import APPROVAL_ORIGIN, Origin
from picode.session.store.branch_context import SUBAGENT_LINK
from picode.session.subagents.definitions import AgentDefinition
from picode.session.subagents.progress import ChildProgress

if TYPE_CHECKING:
    from picode.ai.models import Model, ThinkingLevel
    from picode.session.agent_session import AgentSession
    from picode.session.options import SessionOptions
    from picode.session.safety.approval import ApprovalGate
    from picode.session.seams import SessionSeams

log = logging.getLogger(__name__)

#: The name of the tool that starts a subagent (and which no child gets).
TASK_TOOL = "task"
#: The custom entry of the parent's session file that links a child's transcript.
LINK_ENTRY = SUBAGENT_LINK
#: Seconds a child may take to settle after an abort before it is closed anyway.
SETTLE_S = 5.0
#: Seconds between reports while the child is quiet (a long command), so its time moves.
TICK_S = 1.0

#: The hook events that run for a child's tool calls (docs/hooks.md); its approval asks go
#: through the parent's gate, and so through the parent's ``Notification`` hooks.
CHILD_HOOKS = frozenset({"PreToolUse", "PostToolUse"})

CHILD_PREAMBLE = (
    "You are a subagent: another agent gave you the task below and reads only your final "
    "message. Work on your own (no one can answer questions), then end with a complete, "
    "self-contained answer: what you found or did, with file paths and line numbers."
)

# Children being closed after their task was cancelled; held so they are not collected.
_closing: set[asyncio.Future[None]] = set()


class ParentView(Protocol):
    """What a child needs of its parent session as it starts."""

    @property
    def model(self) -> Model: ...

    @property
    def thinking(self) -> ThinkingLevel: ...

    @property
    def session_id(self) -> str | None: ...


class SubagentRunner:
    def __init__(
        self,
        options: SessionOptions,
        gate: ApprovalGate,
        seams: SessionSeams,
        parent: ParentView,
    ) -> None:
        self._options = options
        self._gate = gate
        self._seams = seams
        self._parent = parent
        self._tools: Sequence[AgentTool] = ()

    def set_tools(self, tools: Sequence[AgentTool]) -> None:
        """The parent's tools, which definitions choose from."""
        self._tools = [tool for tool in tools if tool.name != TASK_TOOL]

    def tool_names(self) -> set[str]:
        return {tool.name for tool in self._tools}

    async def run(
        self,
        definition: AgentDefinition,
        description: str,
        prompt: str,
        signal: AbortSignal,
        on_update: OnUpdate,
        call_id: str,
    ) -> ToolResult:
        """Run a child for the parent's ``task`` call ``call_id`` (its questions name it)."""
        progress = ChildProgress(description, definition.name, on_update)
        progress.report()
        child = await self._open(definition, description)
        progress.model = child.model.ref
        path = child.session_file_path
        progress.session_file = str(path) if path is not None else None
        spent = _Spend(self._seams, child)
        unsubscribe = child.subscribe(lambda event: _on_child_event(event, progress, spent))
        stop = signal.add_callback(lambda _reason: child.abort())
        ticker = asyncio.ensure_future(_tick(progress))
        # This call runs in a task of its own: the child's questions say whose they are.
        origin = APPROVAL_ORIGIN.set(Origin(description, call_id))
        try:
            if not signal.aborted:
                await child.prompt(prompt)
        finally:
            APPROVAL_ORIGIN.reset(origin)
            stop()
            ticker.cancel()
            if signal.aborted:
                child.abort()
            # The child settles, closes and is linked even when this call is cancelled (an
            # abort): the link, written last, keeps the parent the newest file (``-c``).
            finishing = asyncio.ensure_future(
                self._finish(child, description, definition.name, unsubscribe, spent, progress)
            )
            _closing.add(finishing)
            finishing.add_done_callback(_closing.discard)
            await asyncio.shield(finishing)
        return _result(child.messages, progress, signal)

    async def _finish(
        self,
        child: AgentSession,
        description: str,
        agent: str,
        unsubscribe: Callable[[], None],
        spent: _Spend,
        progress: ChildProgress,
    ) -> None:
        try:
            await asyncio.wait_for(child.wait_for_idle(), SETTLE_S)
        except TimeoutError:
            log.warning("a subagent did not settle within %s s of its end", SETTLE_S)
        await child.close()
        unsubscribe()
        spent.settle()
        progress.usage = child.usage.as_record()
        self._link(description, agent, child)

    async def _open(self, definition: AgentDefinition, description: str) -> AgentSession:
        from picode.session.agent_session import AgentSession

        options = self._child_options(definition)
        child = await AgentSession.open(options)
        try:
            if definition.model is not None:
                await child.select_model(definition.model)
            if definition.thinking is not None:
                child.set_thinking_level(definition.thinking)
            child.set_session_name(f"subagent: {description}"[:80])
        except Exception as exc:
            await child.close()
            raise ToolError(f"Agent '{definition.name}' cannot start: {exc}") from None
        return child

    def _child_options(self, definition: AgentDefinition) -> SessionOptions:
        from picode.session.config.mcp import McpSettings

        parent = self._options
        settings = parent.settings.model_copy(
            update={
                # The parent's servers stay the parent's; a child does not start its own.
                "mcp": McpSettings(),
                # The parent's checkpoints already cover what its tools change.
                "checkpoints": parent.settings.checkpoints.model_copy(update={"enabled": False}),
                # Hooks on tool calls guard the child's calls as the parent's; those on the
                # session's own life (start, prompt, stop) are the parent's alone.
                "hooks": {
                    event: specs
                    for event, specs in parent.settings.hooks.items()
                    if event in CHILD_HOOKS
                },
            }
        )
        wanted = set(definition.tools)
        appended = "\n\n".join(
            text
            for text in (parent.append_system_prompt, CHILD_PREAMBLE, definition.instructions)
            if text
        )
        return dataclasses.replace(
            parent,
            settings=settings,
            model=self._parent.model,
            thinking=self._parent.thinking,
            tools=[tool for tool in self._tools if tool.name in wanted],
            session="new" if parent.session is not None else None,
            append_system_prompt=appended,
            approval=self._gate.policy,
            approval_gate=self._gate,
            # The parent runs task only outside plan mode (task does not declare itself
            # read-only), so its children never start in it, whatever --plan said.
            plan=False,
            load_extensions=False,
            model_explicit=True,
            thinking_explicit=True,
            subagents=False,
            subagent_of=self._parent.session_id,
        )

    def _link(self, description: str, agent: str, child: AgentSession) -> None:
        path = child.session_file_path
        if path is None or not path.exists():
            return
        try:
            self._seams.append_entry(
                LINK_ENTRY,
                {
                    "description": description,
                    "agent": agent,
                    "session_id": child.session_id,
                    "session_file": str(path),
                    # Counted in the parent's spend when it is resumed.
                    "usage": child.usage.as_record(),
                },
            )
        except OSError as exc:
            log.warning("could not link the subagent's transcript: %s", exc)


class _Spend:
    """Adds each of the child's counted replies to the parent's usage as it ends."""

    def __init__(self, seams: SessionSeams, child: AgentSession) -> None:
        self._seams = seams
        self._child = child
        self._seen = child.usage.as_record()

    def on_reply(self, message: AssistantMessage) -> None:
        # The child counts a reply only when it keeps it (a retried failure is dropped):
        # its own total says whether this one counted.
        now = self._child.usage.as_record()
        if now != self._seen:
            self._seen = now
            self._seams.spend(message)

    def settle(self) -> None:
        """What the child spent on its own (a compaction's summary) since the last reply."""
        now = self._child.usage.as_record()
        delta = {key: now[key] - self._seen[key] for key in now}
        self._seen = now
        if any(delta.values()):
            self._seams.spend(_usage_message(delta))


async def _tick(progress: ChildProgress) -> None:
    while True:
        await asyncio.sleep(TICK_S)
        progress.tick(TICK_S)


def _on_child_event(event: object, progress: ChildProgress, spent: _Spend) -> None:
    if isinstance(event, MessageEnd) and isinstance(event.message, AssistantMessage):
        spent.on_reply(event.message)
    progress.on_event(event)  # type: ignore[arg-type]  # session events fall through


def _result(messages: Sequence[Any], progress: ChildProgress, signal: AbortSignal) -> ToolResult:
    last = next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
    if signal.aborted or (last is not None and last.stop_reason == "aborted"):
        progress.status = "aborted"
        raise ToolError("The subagent was stopped before it finished.", progress.details())
    if last is None:
        progress.status = "failed"
        raise ToolError("The subagent ended without a reply.", progress.details())
    answer = "".join(b.text for b in last.content if isinstance(b, TextContent)).strip()
    if last.stop_reason == "error":
        progress.status = "failed"
        reason = last.error_message or "unknown error"
        raise ToolError(f"The subagent failed: {reason}", progress.details())
    progress.status = "done"
    progress.tool = None
    return ToolResult.text(answer or "(the subagent gave no answer)", progress.details())


def _usage_message(delta: dict[str, Any]) -> AssistantMessage:
    """A reply carrying only ``delta``'s tokens and cost, for the parent's ``spend``."""
    from picode.ai.types import Cost, Usage

    usage = Usage(
        input=int(delta["input"]),
        output=int(delta["output"]),
        cache_read=int(delta["cache_read"]),
        cache_write=int(delta["cache_write"]),
        cost=Cost(total=float(delta["cost"])),
    )
    return AssistantMessage([], api="", provider="", model="", usage=usage)
