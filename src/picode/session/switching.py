"""Another session file under a live AgentSession: ``/new``, ``/resume`` and ``/fork``.

The tools, approval policy, extensions and MCP servers stay; the conversation, its usage,
the recovery state, the tools approved "always" (they were approved for that conversation)
and (unless a fork keeps what the person chose) the model and thinking level it was saved
with are replaced, and ``SessionSwitched`` tells the front ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from picode.ai.models import THINKING_LEVELS
from picode.session.events import AnySessionEvent, SessionSwitched, SwitchReason
from picode.session.usage import SessionUsage

if TYPE_CHECKING:
    from picode.agent.agent import Agent
    from picode.ai.models import Model, ModelRegistry, ThinkingLevel
    from picode.session.recovery.planner import RecoveryPlanner
    from picode.session.safety.approval import ApprovalGate
    from picode.session.store.recorder import Restored, SessionRecorder


class Switchable(Protocol):
    """The parts of a session a switch replaces or consults."""

    agent: Agent
    approval: ApprovalGate
    recorder: SessionRecorder
    registry: ModelRegistry
    recovery: RecoveryPlanner
    usage: SessionUsage
    save_error: str | None

    @property
    def model(self) -> Model: ...

    @property
    def thinking(self) -> ThinkingLevel: ...

    @property
    def session_id(self) -> str | None: ...

    @property
    def is_running(self) -> bool: ...

    def abort(self) -> None: ...

    async def wait_for_idle(self) -> None: ...

    async def emit(self, event: AnySessionEvent) -> None: ...


async def switch_to(
    session: Switchable,
    open_file: Callable[[], Restored],
    reason: SwitchReason,
    *,
    keep_choices: bool = False,
) -> None:
    """Stop what runs, open the file ``open_file`` opens, and take its conversation.

    ``keep_choices``: the model and thinking level stay as the person set them (a fork
    goes on from here, not with what was in force at the fork point)."""
    if session.is_running:
        session.abort()
        await session.wait_for_idle()
    restored = open_file()
    session.approval.forget_always()
    session.save_error = None
    session.agent.replace_messages(restored.messages)
    session.usage = restored.usage
    if keep_choices:
        _record_choices_over(session, restored)
    else:
        model, thinking = saved_choices(session.registry, restored, session.model, session.thinking)
        session.agent.set_model(model)
        session.agent.set_thinking(thinking)
    session.recorder.set_current(session.model, session.thinking)
    session.recovery.reset(restored.fired_rules)
    await session.emit(SessionSwitched(session.session_id or "", reason))


def saved_thinking(restored: Restored) -> ThinkingLevel | None:
    """The thinking level the file was saved with, if it is one picode knows."""
    if restored.thinking in THINKING_LEVELS:
        return restored.thinking
    return None


def saved_choices(
    registry: ModelRegistry,
    restored: Restored,
    model: Model,
    thinking: ThinkingLevel,
    *,
    keep_model: bool = False,
    keep_thinking: bool = False,
) -> tuple[Model, ThinkingLevel]:
    """The model and thinking level a file was saved with, where picode knows them;
    ``model`` and ``thinking`` otherwise, and where the person chose them (``keep_*``)."""
    if restored.model is not None and not keep_model:
        model = registry.get(*restored.model) or model
    saved = saved_thinking(restored)
    if saved is not None and not keep_thinking:
        thinking = saved
    return model, thinking


def _record_choices_over(session: Switchable, restored: Restored) -> None:
    """The new file says what the branch had; add the model and level in force now."""
    model = session.model
    if restored.model is not None and restored.model != (model.provider, model.id):
        session.recorder.record_model(model)
    if restored.thinking is not None and restored.thinking != session.thinking:
        session.recorder.record_thinking(session.thinking)
