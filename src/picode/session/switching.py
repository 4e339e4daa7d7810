"""Another session file under a live AgentSession: ``/new``, ``/resume`` and ``/fork``.

The tools, approval policy, extensions and MCP servers stay; the conversation, its usage,
the recovery state, the tools approved "always" (they were approved for that conversation)
and (unless a fork keeps what the person chose) the model and thinking level it was saved
with are replaced, and ``SessionSwitched`` tells the front ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from picode.ai.models import THINKING_LEVELS
from picode.session.events import AnySessionEvent, SessionSwitched, SwitchReason

if TYPE_CHECKING:
    from picode.agent.agent import Agent
    from picode.ai.models import Model, ModelRegistry, ThinkingLevel
    from picode.session.recovery.planner import RecoveryPlanner
    from picode.session.safety.approval import ApprovalGate
    from picode.session.store.recorder import Restored, SessionRecorder
    from picode.session.usage import SessionUsage


class SessionSwitching:
    """A part of ``AgentSession`` (it inherits this): it replaces the session's own parts,
    so they stay private to the session."""

    _agent: Agent
    _approval: ApprovalGate
    _recorder: SessionRecorder
    _registry: ModelRegistry
    _recovery: RecoveryPlanner
    _usage: SessionUsage
    _save_error: str | None

    @property
    def model(self) -> Model:
        raise NotImplementedError

    @property
    def thinking(self) -> ThinkingLevel:
        raise NotImplementedError

    @property
    def session_id(self) -> str | None:
        raise NotImplementedError

    @property
    def is_running(self) -> bool:
        raise NotImplementedError

    def abort(self) -> None:
        raise NotImplementedError

    async def wait_for_idle(self) -> None:
        raise NotImplementedError

    async def _emit(self, event: AnySessionEvent) -> None:
        raise NotImplementedError

    async def _session_start_hooks(self, source: str) -> None:
        raise NotImplementedError

    async def _take_saved_todos(self, saved: object) -> None:
        raise NotImplementedError

    async def new_session(self) -> None:
        # Without a session file (--no-session) the next conversation stays off disk too.
        spec = "new" if self._recorder.persistent else None
        await self._switch_to(lambda: self._recorder.open(spec), "new")

    async def switch_session(self, id_or_path: str) -> None:
        await self._switch_to(lambda: self._recorder.open(id_or_path), "resume")

    async def fork(self, entry_id: str) -> str:
        text = ""

        def do_fork() -> Restored:
            nonlocal text
            restored, text = self._recorder.fork(entry_id)
            return restored

        await self._switch_to(do_fork, "fork", keep_choices=True)
        return text

    async def _switch_to(
        self,
        open_file: Callable[[], Restored],
        reason: SwitchReason,
        *,
        keep_choices: bool = False,
    ) -> None:
        """Stop what runs, open the file ``open_file`` opens, and take its conversation.

        ``keep_choices``: the model and thinking level stay as the person set them (a fork
        goes on from here, not with what was in force at the fork point)."""
        if self.is_running:
            self.abort()
            await self.wait_for_idle()
        restored = open_file()
        self._approval.forget_always()
        self._save_error = None
        self._agent.replace_messages(restored.messages)
        self._usage = restored.usage
        if keep_choices:
            self._record_choices_over(restored)
        else:
            model, thinking = saved_choices(self._registry, restored, self.model, self.thinking)
            self._agent.set_model(model)
            self._agent.set_thinking(thinking)
        self._recorder.set_current(self.model, self.thinking)
        self._recovery.reset(restored.fired_rules)
        await self._emit(SessionSwitched(self.session_id or "", reason))
        await self._take_saved_todos(restored.todos)
        # Claude Code's names for why a session starts: /new is its /clear.
        await self._session_start_hooks("clear" if reason == "new" else reason)

    def _record_choices_over(self, restored: Restored) -> None:
        """The new file says what the branch had; add the model and level in force now."""
        model = self.model
        if restored.model is not None and restored.model != (model.provider, model.id):
            self._recorder.record_model(model)
        if restored.thinking is not None and restored.thinking != self.thinking:
            self._recorder.record_thinking(self.thinking)


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
