"""Approval mode: bash, write and edit wait for the front end's yes / always / no.

MCP tools count as bash does: asked about under ``approval = "all"`` only, unless their
server's ``tools.approved`` lists them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

ApprovalPolicy = Literal["never", "edits", "all"]

_GATED: dict[str, frozenset[str]] = {
    "never": frozenset(),
    "edits": frozenset({"write", "edit"}),
    "all": frozenset({"bash", "write", "edit"}),
}


@dataclass(slots=True)
class ApprovalRequest:
    call_id: str
    tool_name: str
    args: dict[str, Any]
    #: What a person needs to decide: the command, or the change as a diff or the new content.
    preview: str
    #: Set when the sandbox blocked this command: what it blocked. The question is then
    #: whether to run it outside the sandbox ("always" = and allow network this session).
    escalation: str | None = None


@dataclass(slots=True)
class ApprovalDecision:
    kind: Literal["yes", "always", "no"]
    reason: str | None = None


Approver = Callable[[ApprovalRequest], Awaitable[ApprovalDecision]]


class ApprovalGate:
    """Decides which calls need a person, remembers "always" for the session."""

    def __init__(self, policy: ApprovalPolicy, approver: Approver | None) -> None:
        self.policy: ApprovalPolicy = policy
        self.approver = approver
        self._always: set[str] = set()
        #: MCP tools as the session offers them now, less those approved in the config.
        self.gated_as_all: frozenset[str] = frozenset()
        #: Who is asked to let a command the sandbox blocked run outside it; None: nobody
        #: (headless modes), the command's result says what was blocked instead.
        self.escalator: Approver | None = None
        #: The sandboxes of the session's tools (``offer_escalation``), duck-typed.
        self.sandboxes: list[Any] = []

    def forget_always(self) -> None:
        """ "Always" was said for one conversation: another one (``/new``, ``/resume``,
        ``/fork``) starts asking again, and the sandbox takes back the network it was given
        for the conversation."""
        self._always.clear()
        for sandbox in self.sandboxes:
            sandbox.network_for_session = False

    def needs_approval(self, tool_name: str) -> bool:
        gated = tool_name in _GATED[self.policy] or (
            self.policy == "all" and tool_name in self.gated_as_all
        )
        return self.approver is not None and gated and tool_name not in self._always

    async def check(self, call_id: str, tool_name: str, args: dict[str, Any]) -> str | None:
        """None to proceed, or the reason the call was refused."""
        if not self.needs_approval(tool_name) or self.approver is None:
            return None
        decision = await self.approver(
            ApprovalRequest(call_id, tool_name, args, preview_for(tool_name, args))
        )
        if decision.kind == "always":
            self._always.add(tool_name)
            return None
        if decision.kind == "yes":
            return None
        reason = (decision.reason or "").strip()
        return f"The user denied this {tool_name} call" + (f": {reason}" if reason else ".")

    async def escalate(
        self, command: str, blocked: str
    ) -> Literal["once", "network", "no", "unasked"]:
        """Run ``command``, blocked by the sandbox, outside it? Asked whatever the policy."""
        if self.escalator is None:
            return "unasked"
        args = {"command": command}
        request = ApprovalRequest("", "bash", args, preview_for("bash", args), blocked)
        decision = await self.escalator(request)
        if decision.kind == "yes":
            return "once"
        return "network" if decision.kind == "always" else "no"


def offer_escalation(tools: Iterable[object], gate: ApprovalGate) -> None:
    """Let sandboxed tools (bash's ``sandbox``) ask through ``gate`` to leave the sandbox.

    Matched by shape: the session does not import tools."""
    for tool in tools:
        sandbox = getattr(tool, "sandbox", None)
        if sandbox is not None and hasattr(sandbox, "escalate"):
            sandbox.escalate = gate.escalate
            gate.sandboxes.append(sandbox)


def preview_for(tool_name: str, args: dict[str, Any]) -> str:
    if tool_name == "bash":
        return str(args.get("command", ""))
    path = str(args.get("path", ""))
    if tool_name == "write":
        content = str(args.get("content", ""))
        lines = content.splitlines()
        head = "\n".join(f"+{line}" for line in lines[:40])
        more = f"\n… {len(lines) - 40} more lines" if len(lines) > 40 else ""
        return f"write {path} ({len(lines)} lines)\n{head}{more}"
    if tool_name == "edit":
        edits = args.get("edits") or [
            {"old_text": args.get("old_text", ""), "new_text": args.get("new_text", "")}
        ]
        chunks = [f"edit {path}"]
        for edit in edits:
            old = str(edit.get("old_text", "")).splitlines()
            new = str(edit.get("new_text", "")).splitlines()
            chunks.append("\n".join([*(f"-{line}" for line in old), *(f"+{line}" for line in new)]))
        return "\n".join(chunks)
    import json

    return f"{tool_name} {json.dumps(args, ensure_ascii=False, indent=2)}"
