"""Where the session runs its hooks (docs/hooks.md): a part of ``AgentSession``.

``SessionStart`` when the session opens or switches, ``UserPromptSubmit`` before a prompt
runs, ``PreToolUse`` / ``PostToolUse`` around each tool call (beside the approval gate),
``Stop`` when the agent is done, ``Notification`` when an approval waits for the person.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from picode.agent.tool import ToolResult
from picode.ai.types import AssistantMessage, TextContent
from picode.session.hooks.hooks import HookRunner, HookVerdict

if TYPE_CHECKING:
    from picode.agent.agent import Agent
    from picode.ai.types import ToolCall
    from picode.session.safety.approval import (
        ApprovalDecision,
        ApprovalPolicy,
        ApprovalRequest,
        Approver,
    )
    from picode.session.store.recorder import SessionRecorder

#: Times in a row Stop hooks may send the agent back to work within one run.
MAX_STOP_BLOCKS = 3


class HookControls:
    _agent: Agent
    _recorder: SessionRecorder
    _hooks: HookRunner
    #: The system prompt without what ``SessionStart`` hooks added.
    _prompt_base: str | None = None
    _stop_blocks: int = 0

    @property
    def approval_policy(self) -> ApprovalPolicy:
        raise NotImplementedError

    def abort(self) -> None:
        raise NotImplementedError

    def follow_up(self, text: str) -> None:
        raise NotImplementedError

    def notify(self, text: str, level: str = "info", source: str | None = None) -> None:
        raise NotImplementedError

    def _hook_fields(self) -> dict[str, Any]:
        path = self._recorder.path
        return {
            "session_id": self._recorder.session_id,
            "transcript_path": str(path) if path is not None else None,
            "cwd": str(self._recorder.cwd),
            "permission_mode": self.approval_policy,
        }

    async def _session_start_hooks(self, source: str) -> None:
        """``source``: startup, resume, clear or fork. What the hooks print is context for
        the whole session: it goes after the system prompt (replacing an earlier start's)."""
        if not self._hooks.wants("SessionStart", source):
            return
        verdict = await self._hooks.run("SessionStart", {"source": source}, source)
        if self._prompt_base is None:
            self._prompt_base = self._agent.state.system_prompt
        added = "\n\n".join(verdict.context)
        self._agent.set_system_prompt(
            self._prompt_base
            + (f"\n\n<session-start-hook>\n{added}\n</session-start-hook>" if added else "")
        )

    async def _prompt_hooks(self, text: str) -> str | None:
        """The prompt as it goes to the model (with any context the hooks add), or None
        when a hook blocked it (the person is told why; nothing is sent or saved)."""
        self._stop_blocks = 0
        if not self._hooks.wants("UserPromptSubmit"):
            return text
        verdict = await self._hooks.run("UserPromptSubmit", {"prompt": text})
        if verdict.blocked:
            self.notify(f"Prompt blocked: {verdict.reason}", "warning", "hook UserPromptSubmit")
            return None
        if verdict.stop is not None:
            self.notify(verdict.stop, "warning", "hook UserPromptSubmit")
            return None
        for context in verdict.context:
            text += f"\n\n<user-prompt-submit-hook>\n{context}\n</user-prompt-submit-hook>"
        return text

    async def _pre_tool_hooks(self, call: ToolCall) -> HookVerdict:
        """A block comes back as the reason the model reads (in ``verdict.reasons``)."""
        if not self._hooks.wants("PreToolUse", call.name):
            return HookVerdict()
        verdict = await self._hooks.run(
            "PreToolUse",
            {"tool_name": call.name, "tool_input": call.arguments, "tool_use_id": call.id},
            call.name,
        )
        if verdict.stop is not None:
            verdict.reasons.append(verdict.stop)
            self.abort()
        return verdict

    async def _post_tool_hooks(self, call: ToolCall, result: ToolResult) -> ToolResult:
        """The result, with what the hooks tell the model after it (a block's reason,
        ``additionalContext``) appended: the call has run, it cannot be undone here."""
        if not self._hooks.wants("PostToolUse", call.name):
            return result
        response = {"content": result.text_content, "is_error": result.is_error}
        fields = {
            "tool_name": call.name,
            "tool_input": call.arguments,
            "tool_use_id": call.id,
            "tool_response": response,
        }
        verdict = await self._hooks.run("PostToolUse", fields, call.name)
        notes = [f"PostToolUse hook: {reason}" for reason in verdict.reasons]
        notes += verdict.context
        if verdict.stop is not None:
            self.abort()
        if not notes:
            return result
        content = [*result.content, TextContent("\n\n".join(notes))]
        return ToolResult(content, result.details, is_error=result.is_error)

    async def _stop_hooks(self) -> bool:
        """True when a Stop hook sends the agent back to work (its reason is queued as the
        next message); at most ``MAX_STOP_BLOCKS`` times in a row."""
        if not self._hooks.wants("Stop"):
            return False
        last = self._agent.state.messages[-1] if self._agent.state.messages else None
        if isinstance(last, AssistantMessage) and last.stop_reason in ("error", "aborted"):
            return False  # the run failed or was stopped: not the agent's own end
        active = self._stop_blocks > 0
        verdict = await self._hooks.run("Stop", {"stop_hook_active": active})
        if not verdict.blocked or verdict.stop is not None:
            return False
        if self._stop_blocks >= MAX_STOP_BLOCKS:
            text = f"Stop hooks blocked {MAX_STOP_BLOCKS} times in a row; picode stopped anyway"
            self.notify(text, "warning", "hook Stop")
            return False
        self._stop_blocks += 1
        self.follow_up(f"A Stop hook asks you to go on: {verdict.reason}")
        return True

    def _notifying(self, approver: Approver) -> Approver:
        """``approver``, with the ``Notification`` hooks started as it begins to wait."""

        async def ask(request: ApprovalRequest) -> ApprovalDecision:
            if self._hooks.wants("Notification"):
                message = f"picode needs your permission to use {request.tool_name}"
                fields = {"message": message, "notification_type": "permission_prompt"}
                task = asyncio.ensure_future(self._hooks.run("Notification", fields))
                task.add_done_callback(_quietly)
            return await approver(request)

        return ask


def _quietly(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()
