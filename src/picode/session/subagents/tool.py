"""The ``task`` tool: hand a self-contained job to a subagent (docs/subagents.md).

The session builds it (it needs the session to start a child) and offers it beside the
coding tools. Several ``task`` calls in one reply run at once, at most
``[subagents] max_parallel`` of them; the others wait their turn, cancellable.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field

from picode.agent.tool import AgentTool, BaseTool, OnUpdate, StrictParams, ToolError, ToolResult
from picode.ai.abort import AbortSignal
from picode.session.subagents.definitions import AgentDefinitions, open_agents
from picode.session.subagents.runner import TASK_TOOL, ParentView, SubagentRunner

if TYPE_CHECKING:
    from picode.session.options import SessionOptions
    from picode.session.safety.approval import ApprovalGate
    from picode.session.seams import SessionSeams

DESCRIPTION = """\
Hand a self-contained job to a subagent: another agent with a fresh context (your system \
rules and AGENTS.md, none of this conversation) that works on its own and returns only its \
final answer. Use it to keep this conversation small: searching a large codebase, reading \
many files to answer one question, reviewing a change, investigating a failure. Several \
task calls in one reply run in parallel. The subagent sees only `prompt`: say everything it \
needs (goal, paths, what to return). Do not use it for a job of one or two tool calls.

Agents (`agent`, default "general"):"""


class TaskParams(StrictParams):
    description: str = Field(
        min_length=1, description="A short title of the job (3-8 words), shown to the user."
    )
    prompt: str = Field(
        min_length=1,
        description="The whole task for the subagent: it sees nothing else of this chat.",
    )
    agent: str | None = Field(
        default=None, description="Which agent runs it (see the list); default 'general'."
    )


class TaskTool(BaseTool):
    name: ClassVar[str] = TASK_TOOL
    label: ClassVar[str] = "Task"
    description: ClassVar[str] = DESCRIPTION
    params_model: ClassVar[type[TaskParams]] = TaskParams

    def __init__(
        self, runner: SubagentRunner, definitions: AgentDefinitions, max_parallel: int
    ) -> None:
        self._runner = runner
        self._definitions = definitions
        self._slots = asyncio.Semaphore(max(1, max_parallel))
        listed = "\n".join(
            f"- {agent.name}: {agent.description}" for agent in definitions.agents.values()
        )
        # An instance attribute: the list depends on the folders this session found.
        self.description = f"{DESCRIPTION}\n{listed}"  # type: ignore[misc]

    async def execute(
        self, call_id: str, args: Any, signal: AbortSignal, on_update: OnUpdate
    ) -> ToolResult:
        params: TaskParams = args
        name = params.agent or "general"
        definition = self._definitions.get(name)
        if definition is None:
            known = ", ".join(self._definitions.agents)
            raise ToolError(f"Unknown agent '{name}'. Agents: {known}.")
        async with self._slots:
            if signal.aborted:
                raise ToolError("The subagent was stopped before it started.")
            return await self._runner.run(
                definition, params.description, params.prompt, signal, on_update, call_id
            )


def offer_task_tool(
    tools: Sequence[AgentTool],
    options: SessionOptions,
    gate: ApprovalGate,
    seams: SessionSeams,
    parent: ParentView,
    notify: Callable[[str, str, str], None],
) -> list[AgentTool]:
    """``tools`` plus ``task`` when this session may start subagents (not a child itself,
    not turned off in the config)."""
    settings = options.settings.subagents
    if not options.subagents or not settings.enabled:
        return list(tools)
    definitions = open_agents(
        options.paths.config_dir, options.cwd, notify, project_trusted=options.project_trusted
    )
    runner = SubagentRunner(options, gate, seams, parent)
    runner.set_tools(tools)
    known = runner.tool_names()
    for agent in definitions.agents.values():
        missing = [name for name in agent.tools if name not in known and name != TASK_TOOL]
        if missing and agent.source != "builtin":
            notify(
                f"Agent '{agent.name}' ({agent.path}): {', '.join(missing)} "
                "not among picode's tools here; it runs without them.",
                "warning",
                "agents",
            )
    return [*tools, TaskTool(runner, definitions, settings.max_parallel)]
