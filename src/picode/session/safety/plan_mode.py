"""Plan mode: the model may only read until the person approves its plan (docs/tui.md,
"Plan mode").

The session's mode is its approval policy ("never", "edits", "all") or "plan". In plan mode
a tool runs only if it declares itself read-only (``picode.agent.tool.is_read_only``: read,
grep, find, ls, MCP tools annotated ``readOnlyHint``, the ``exit_plan_mode`` tool itself);
any other call is refused in the tool gate with a result that tells the model to present
its plan. The tools the model is offered never change, so the prompt cache stays warm.

The model ends planning with ``exit_plan_mode {plan}``: the front end's plan approver
(``set_plan_approver``) shows the plan, and the person approves it (plan mode ends, the work
runs under the approval policy they chose), asks for changes (the result carries their
words; plan mode stays) or cancels (the run stops as Esc stops it; plan mode stays). With
no approver (print and json modes) plan mode stays on and the model is told to end its
turn with the plan as its answer, which those modes print.

A part of ``AgentSession`` (it inherits this), kept beside approval.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

from picode.agent.file_blocks import mode_note, notes_in
from picode.agent.tool import ToolResult, is_read_only, require_arguments
from picode.ai.types import Message, TextContent, ToolResultMessage, UserMessage
from picode.session.events import AnySessionEvent, ModeChanged
from picode.session.safety.approval import APPROVAL_POLICIES, ApprovalGate, ApprovalPolicy

if TYPE_CHECKING:
    from picode.agent.tool import AgentTool, OnUpdate
    from picode.ai.abort import AbortSignal
    from picode.session.options import SessionOptions

SessionMode = Literal["never", "edits", "all", "plan"]
SESSION_MODES: tuple[SessionMode, ...] = get_args(SessionMode)
#: Shift+Tab's order: each press asks less, then plan mode, then back to asking most.
MODE_CYCLE: tuple[SessionMode, ...] = ("all", "edits", "never", "plan")

EXIT_PLAN_MODE = "exit_plan_mode"


@dataclass(slots=True)
class PlanRequest:
    call_id: str
    #: Markdown as the model wrote it: untrusted, render it through a safe path only.
    plan: str


@dataclass(slots=True)
class PlanDecision:
    kind: Literal["approve", "feedback", "cancel"]
    #: After "approve": the policy the work runs under ("never": edits run at once,
    #: "edits": each write and edit is asked about, "all": commands too).
    policy: ApprovalPolicy = "never"
    #: After "feedback": what the person wants changed (may be empty).
    feedback: str | None = None


PlanApprover = Callable[[PlanRequest], Awaitable[PlanDecision]]


@dataclass(slots=True)
class PlanState:
    on: bool = False
    approver: PlanApprover | None = None


_DESCRIPTION = (
    "Present your plan to the user for approval and leave plan mode. Only for plan mode: "
    "while it is on, only tools that read run. When you have explored enough, call this "
    "with the whole plan in Markdown (the steps, the files you will change, how you will "
    "check the result); then wait for the result, which says whether the user approved it, "
    "wants changes or stopped."
)
_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "plan": {"type": "string", "description": "The plan, in Markdown."},
    },
    "required": ["plan"],
    "additionalProperties": False,
}

PLAN_ON_NOTE = (
    "Plan mode is on: only tools that read run; write, edit, bash and any other tool that "
    "could change something are refused. Explore, then present your plan with "
    f"{EXIT_PLAN_MODE} and wait for the user's approval before changing anything."
)
PLAN_OFF_NOTE = "Plan mode is off: you may change files and run commands again."
NOT_IN_PLAN_MODE = (
    "Plan mode is not on, so there is no plan to approve: go on with the task as asked."
)
NO_APPROVER = (
    "No one can approve a plan in this mode, so plan mode stays on and nothing will be "
    "changed. End your turn now: reply with the plan, unchanged, as your final answer."
)
_AFTER_APPROVAL: dict[ApprovalPolicy, str] = {
    "never": "your edits and commands run without asking",
    "edits": "each write and edit waits for the user's approval",
    "all": "each write, edit and command waits for the user's approval",
}


def refusal(tool_name: str) -> str:
    return (
        f"Not run: picode is in plan mode, where only tools that read run, and {tool_name} "
        f"could change something. Finish exploring, then present your plan with "
        f"{EXIT_PLAN_MODE}; once the user approves it you can carry it out."
    )


@dataclass(slots=True)
class ExitPlanModeTool:
    """``exit_plan_mode``: read-only, so that plan mode lets it run."""

    run: Callable[[str, dict[str, Any]], Awaitable[ToolResult]]
    name: str = EXIT_PLAN_MODE
    label: str = "Plan"
    description: str = _DESCRIPTION
    read_only: bool = True

    @property
    def parameters(self) -> dict[str, Any]:
        return _SCHEMA

    def validate(self, arguments: dict[str, Any]) -> Any:
        return require_arguments(arguments, ("plan",))

    async def execute(
        self, call_id: str, args: Any, signal: AbortSignal, on_update: OnUpdate
    ) -> ToolResult:
        return await self.run(call_id, args)


def told_plan_mode(messages: Sequence[Message]) -> bool:
    """Whether the last word the model had on plan mode said it is on: a note in a prompt,
    or an approved plan's result (which says plan mode is off)."""
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            for note in reversed(notes_in(message)):
                if note in (PLAN_ON_NOTE, PLAN_OFF_NOTE):
                    return note == PLAN_ON_NOTE
        elif isinstance(message, ToolResultMessage) and message.tool_name == EXIT_PLAN_MODE:
            details = message.details if isinstance(message.details, dict) else {}
            if details.get("decision") == "approve":
                return False
    return False


class PlanControls:
    _approval: ApprovalGate
    _plan: PlanState

    if TYPE_CHECKING:

        def _emit_soon(self, event: AnySessionEvent) -> None: ...

        def abort(self) -> None: ...

        def tool(self, name: str) -> AgentTool | None: ...

        @property
        def messages(self) -> Sequence[Message]: ...

    @property
    def mode(self) -> SessionMode:
        """ "plan", or the approval policy: "never", "edits" or "all"."""
        return "plan" if self._plan.on else self._approval.policy

    def set_mode(self, mode: str) -> None:
        """Enter plan mode, or leave it for an approval policy; from the next tool call on.
        Raises ``ValueError`` for a mode that is not one of ``SESSION_MODES``."""
        if mode not in SESSION_MODES:
            raise ValueError(f"unknown mode {mode!r}; one of {', '.join(SESSION_MODES)}")
        if mode == "plan":
            self._plan.on = True
        else:
            self._plan.on = False
            self._approval.policy = mode  # type: ignore[assignment]
        self._emit_soon(ModeChanged(self.mode))

    def cycle_mode(self) -> SessionMode:
        """The next mode of ``MODE_CYCLE`` (Shift+Tab in the TUI)."""
        index = MODE_CYCLE.index(self.mode)
        self.set_mode(MODE_CYCLE[(index + 1) % len(MODE_CYCLE)])
        return self.mode

    def set_plan_approver(self, approver: PlanApprover | None) -> None:
        """Who is shown the plan of ``exit_plan_mode`` and answers it (the front end)."""
        self._plan.approver = approver

    # --- the session's own use -----------------------------------------------------------

    def _plan_refusal(self, tool_name: str) -> str | None:
        """Why a call is refused in plan mode; None when it may run."""
        if not self._plan.on:
            return None
        tool = self.tool(tool_name)
        if tool is None or is_read_only(tool):
            return None
        return refusal(tool_name)

    def _mode_notes(self) -> list[TextContent]:
        """A note for the next prompt when plan mode is not what the conversation last told
        the model (read from the messages: right after /new, /resume, /fork, a rewind or a
        compaction too)."""
        if self._plan.on == told_plan_mode(self.messages):
            return []
        return [mode_note(PLAN_ON_NOTE if self._plan.on else PLAN_OFF_NOTE)]

    def _plan_tools(self, options: SessionOptions) -> list[ExitPlanModeTool]:
        """``exit_plan_mode``, unless this is a subagent (it shares its parent's approval
        gate): no one puts a subagent in plan mode, and its tools are what its definition
        names."""
        if options.approval_gate is not None:
            return []
        return [ExitPlanModeTool(self._exit_plan_mode)]

    async def _exit_plan_mode(self, call_id: str, args: dict[str, Any]) -> ToolResult:
        plan = args.get("plan")
        if not isinstance(plan, str) or not plan.strip():
            return ToolResult.text("'plan' must be the plan, in Markdown.", is_error=True)
        if not self._plan.on:
            return ToolResult.text(NOT_IN_PLAN_MODE, {"plan": plan, "decision": "not_in_plan"})
        approver = self._plan.approver
        if approver is None:
            return ToolResult.text(NO_APPROVER, {"plan": plan, "decision": "unasked"})
        decision = await approver(PlanRequest(call_id, plan))
        details = {"plan": plan, "decision": decision.kind}
        if decision.kind == "approve":
            policy = decision.policy if decision.policy in APPROVAL_POLICIES else "edits"
            self.set_mode(policy)
            return ToolResult.text(
                "The user approved the plan. Plan mode is off: carry out the plan now "
                f"({_AFTER_APPROVAL[policy]}).",
                {**details, "policy": policy},
            )
        if decision.kind == "feedback":
            feedback = (decision.feedback or "").strip()
            wants = f" They said:\n\n{feedback}\n\n" if feedback else " "
            return ToolResult.text(
                "The user did not approve the plan yet and wants to keep planning."
                f"{wants}You are still in plan mode: revise the plan (read more if you need "
                f"to) and present it again with {EXIT_PLAN_MODE}.",
                {**details, "feedback": feedback},
            )
        # Cancel: the run stops as Esc stops it; plan mode stays.
        self.abort()
        return ToolResult.text("The user stopped the run.", details)
