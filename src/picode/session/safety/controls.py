"""The session's approval policy and sandbox, and the checks around each tool call.

A part of ``AgentSession`` (it inherits this), kept beside approval, secrets and trust."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from picode.session.config.limits import limit_reached
from picode.session.hooks.controls import HookControls
from picode.session.safety.approval import ApprovalGate, ApprovalPolicy, Approver
from picode.session.safety.secrets import redact_tool_result

if TYPE_CHECKING:
    from picode.agent.tool import ToolResult
    from picode.ai.types import Message, ToolCall
    from picode.session.config.settings import Settings
    from picode.session.extensions.loader import ExtensionHost


class SafetyControls(HookControls):
    _approval: ApprovalGate
    _settings: Settings
    _extensions: ExtensionHost

    if TYPE_CHECKING:  # PlanControls'

        def _plan_refusal(self, tool_name: str) -> str | None: ...

    @property
    def approval_policy(self) -> ApprovalPolicy:
        """Which tool calls are asked about: "never", "edits" or "all"."""
        return self._approval.policy

    def set_approval_policy(self, policy: ApprovalPolicy) -> None:
        """From the next tool call on."""
        self._approval.policy = policy

    def set_approver(self, approver: Approver) -> None:
        """Who answers approval asks (the front end's prompt)."""
        self._approval.approver = self._notifying(approver)

    def set_escalator(self, escalator: Approver) -> None:
        """Who is asked to run a command the sandbox blocked outside it (whatever the
        approval policy); without one the command's result says what was blocked."""
        self._approval.escalator = self._notifying(escalator)

    @property
    def approvals_granted(self) -> list[str]:
        """What "always" was said to in this conversation (``/permissions``)."""
        return self._approval.always_granted()

    @property
    def approvals_saved(self) -> tuple[list[str], str | None]:
        """The commands approved for good in this folder (``p`` at the question), and why
        the file of them could not be read when it could not (none count then)."""
        granted = self._approval.saved_granted()
        saved = self._approval.saved
        return granted, saved.problem if saved is not None else None

    @property
    def approvals_configured(self) -> list[tuple[str, str]]:
        """(where from, what) for the commands that run unasked by your config's
        ``allow_commands`` and Claude Code's ``Bash(...)`` rules (its deny and ask lists as
        "Never run" and "Always asked"), then ("Not used", why) for rules read and left
        out."""
        return self._approval.configured_granted()

    def save_approval(self, command: str) -> str:
        """Let the commands starting with ``command``'s words run unasked in this folder
        (as ``p`` at a question would); what that covers, as ``/permissions`` says it.

        Raises ``ValueError`` for what is not plain words, ``SavedApprovalsError`` when the
        file cannot be written."""
        return self._approval.save_words(command)

    def forget_saved_approvals(self) -> int:
        """Take back the commands approved for good in this folder; how many there were.

        Raises ``SavedApprovalsError`` when the file cannot be read or written."""
        return self._approval.forget_saved()

    def revoke_approvals(self) -> None:
        """Ask again about everything "always" was said to, and take back the network given
        to sandboxed commands for this conversation."""
        self._approval.forget_always()

    @property
    def sandbox_state(self) -> tuple[bool, bool] | None:
        """(confining, network allowed) of the commands' sandbox; None without one."""
        sandboxes = self._approval.sandboxes
        if not sandboxes:
            return None
        return bool(sandboxes[0].active), bool(sandboxes[0].network())

    def allow_sandbox_network(self, allowed: bool) -> None:
        """Give sandboxed commands the network for the rest of this session, or take back
        what was given this session (what config.toml allows stays)."""
        for sandbox in self._approval.sandboxes:
            sandbox.network_for_session = allowed

    @property
    def run_limits(self) -> tuple[int, float]:
        """(model requests, US dollars) the agent may go in a row without a message from
        the person; 0: no limit (``[limits]``, ``--max-turns``, ``--max-cost``)."""
        limits = self._settings.limits
        return limits.max_turns, limits.max_cost_usd

    def _over_limit(self, requests: int, recent: Sequence[Message]) -> bool:
        """``[limits]``: stop before the next request, saying why (docs/configuration.md)."""
        reason = limit_reached(self._settings.limits, requests, recent)
        if reason is not None:
            self.notify(reason, "warning", "limits")
        return reason is not None

    async def _before_tool_call(self, call: ToolCall, args: Any) -> str | None:
        if refused := self._plan_refusal(call.name):
            return refused
        reason = await self._extensions.on_tool_call(call.name, call.arguments, call.id)
        if reason:
            return reason
        verdict = await self._pre_tool_hooks(call)
        if verdict.blocked:
            return f"Blocked by a PreToolUse hook: {verdict.reason}"
        hook = verdict.permission if verdict.permission != "deny" else None
        return await self._approval.check(call.id, call.name, call.arguments, hook)

    async def _after_tool_call(self, call: ToolCall, result: ToolResult) -> ToolResult | None:
        changed = await self._extensions.on_tool_result(call.name, call.arguments, call.id, result)
        result = await self._post_tool_hooks(call, changed or result)
        # What the model reads: keys and token shapes masked (docs/security.md, "Secrets").
        return redact_tool_result(result, shapes=self._shapes)

    @property
    def _shapes(self) -> bool:
        """Are token shapes masked in what the model reads? (Keys always are.)"""
        return self._settings.redaction.tool_results
