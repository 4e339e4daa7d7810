"""SessionOptions: what a front end decides before a session opens. Kept apart from
AgentSession so building it (at start-up, before the first frame) imports nothing heavy."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from picode.ai.models import Model, ModelRegistry, ThinkingLevel
from picode.ai.stream import stream_simple

if TYPE_CHECKING:
    from picode.agent.tool import AgentTool
    from picode.session.config.settings import Settings
    from picode.session.paths import Paths
    from picode.session.safety.approval import ApprovalGate, ApprovalPolicy, Approver
    from picode.session.store import NewSessionFile


@dataclass(slots=True)
class SessionOptions:
    cwd: Path
    paths: Paths
    settings: Settings
    registry: ModelRegistry
    model: Model
    thinking: ThinkingLevel = "off"
    #: What the agent may call, composed by the launcher (``picode.tools.coding_tools``
    #: plus any extras); extension tools are added by the session.
    tools: Sequence[AgentTool] = ()
    #: "new", "continue", an id or unique prefix, a path, a new file to create
    #: (``--session new.jsonl``), or None for no file at all.
    session: Literal["new", "continue"] | str | Path | NewSessionFile | None = "new"
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    approver: Approver | None = None
    approval: ApprovalPolicy | None = None
    #: Start in plan mode (``--plan``).
    plan: bool = False
    load_extensions: bool = True
    #: The person trusts this folder: its ``.picode/`` extensions, rules and SYSTEM.md apply
    #: (session/safety/trust.py). Off unless a front end says so.
    project_trusted: bool = False
    stream_fn: Callable[..., Any] = stream_simple
    #: Chosen on the command line: they win over what a resumed session recorded.
    model_explicit: bool = False
    thinking_explicit: bool = False
    #: A subagent's: its parent's gate, so asks reach the same approver and "always" holds
    #: for both (session/subagents/).
    approval_gate: ApprovalGate | None = None
    #: Offer the ``task`` tool (off in a subagent: one level deep).
    subagents: bool = True
    #: A subagent's: its parent's session id, in its file's header (``subagent_of``), so
    #: that lists of conversations leave it out.
    subagent_of: str | None = None
