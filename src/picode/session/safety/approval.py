"""Approval mode: bash, write and edit wait for the front end's yes / always / no.

MCP tools count as bash does: asked about under ``approval = "all"`` only, unless their
server's ``tools.approved`` lists them. Writes and edits of a protected path (picode's own
folders, keys, shell start-up files, git hooks and config, the project's ``.picode/``)
are asked about in every mode, and refused where no one can be asked.

Previews are in the spelled-out form of ``picode.ai.untrusted``: what a person reads is
what runs, whatever control characters the arguments hold."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypedDict, get_args

from picode.agent.home_paths import KEY_LOCATIONS, SHELL_STARTUP_FILES
from picode.ai.untrusted import one_line, visible
from picode.session.paths import Paths, project_dir
from picode.session.safety.claude_permissions import ClaudeRules, read_claude_rules
from picode.session.safety.command_scope import CommandScope, command_scope
from picode.session.safety.saved_approvals import (
    SavedApprovals,
    SavedApprovalsError,
    configured_scope,
)

ApprovalPolicy = Literal["never", "edits", "all"]
#: From the least asked to the most.
APPROVAL_POLICIES: tuple[ApprovalPolicy, ...] = get_args(ApprovalPolicy)

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
    #: Set when the call touches a protected path: what that path is ("a shell start-up file").
    protected: str | None = None
    #: Set when a subagent asks (it shares the parent's gate): its task's description, as
    #: the model wrote it (spell it out before showing it).
    origin: str | None = None
    #: With ``origin``: the parent's ``task`` call that runs that subagent.
    origin_call_id: str | None = None
    #: What "always" approves for the rest of the conversation: the tool ("every write"),
    #: or for a command the commands that start the same way (``command_scope``).
    always_means: str | None = None
    #: "project" may be answered: the same commands approved for good in this folder
    #: (offered for commands, where there is a file to save them in).
    can_save: bool = False
    #: Who asks about this call each time, whatever was said before: a PreToolUse hook, or
    #: Claude Code's ask rule (``Claude Code's permissions.ask (Bash(rm *))``). "Always"
    #: is not offered then (``always_means`` is None): the next call is asked about again.
    asked_by: str | None = None

    @property
    def asker(self) -> str | None:
        """Who asks, for a question's title: ``Subagent “…”`` (spelled out), or None when
        it is the session itself."""
        return f"Subagent “{one_line(self.origin)}”" if self.origin else None


@dataclass(frozen=True, slots=True)
class Origin:
    """The subagent a question is asked for: its task's description, and the parent's
    ``task`` call that runs it (a front end shows that call waiting too)."""

    description: str
    call_id: str


#: The subagent on whose behalf the current task runs (``subagents/runner.py`` sets it
#: around a child's run; the child's tasks inherit it), so its questions say so.
APPROVAL_ORIGIN: ContextVar[Origin | None] = ContextVar("APPROVAL_ORIGIN", default=None)


class _OriginFields(TypedDict, total=False):
    origin: str
    origin_call_id: str


def _origin() -> _OriginFields:
    origin = APPROVAL_ORIGIN.get()
    if origin is None:
        return {}
    return {"origin": origin.description, "origin_call_id": origin.call_id}


@dataclass(slots=True)
class ApprovalDecision:
    #: "project": "always", and saved for this folder (a request that ``can_save``; for
    #: any other it means "always").
    kind: Literal["yes", "always", "project", "no"]
    reason: str | None = None


Approver = Callable[[ApprovalRequest], Awaitable[ApprovalDecision]]


class ApprovalGate:
    """Decides which calls need a person, remembers "always" for the session."""

    def __init__(
        self,
        policy: ApprovalPolicy,
        approver: Approver | None,
        protected: ProtectedPaths | None = None,
        *,
        saved: SavedApprovals | None = None,
        configured: tuple[CommandScope, ...] = (),
        claude: ClaudeRules | None = None,
        notify: Callable[[str], None] | None = None,
    ) -> None:
        self.policy: ApprovalPolicy = policy
        self.approver = approver
        self.protected = protected
        self._always: set[str] = set()
        #: The commands "always" was said to, each as the commands it covers.
        self._commands: list[CommandScope] = []
        #: Commands approved for good: saved for this folder, and your config's
        #: ``allow_commands`` (never a project's).
        self.saved = saved
        self.configured = configured
        #: Claude Code's ``Bash(...)`` rules where its users keep them.
        self.claude = claude or ClaudeRules()
        self._notify = notify
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
        self._commands.clear()
        for sandbox in self.sandboxes:
            sandbox.network_for_session = False

    def always_granted(self) -> list[str]:
        """What "always" was said to in this conversation, as the questions named it."""
        tools = [f"every {name} call" for name in sorted(self._always)]
        return [*tools, *(scope.describe_granted() for scope in self._commands)]

    def saved_granted(self) -> list[str]:
        """The commands approved for good in this folder, as ``always_granted`` names them."""
        scopes = self.saved.scopes() if self.saved is not None else []
        return [scope.describe_granted() for scope in scopes]

    def configured_granted(self) -> list[tuple[str, str]]:
        """(where from, what) for your config's ``allow_commands`` and Claude Code's rules,
        then what of those was read and is not used, and why."""
        claude = self.claude
        return [
            *(("config.toml", scope.describe_granted()) for scope in self.configured),
            *(("Claude Code", line) for line in claude.described()),
            *(("Never run", f"{rule.text} (Claude Code's deny)") for rule in claude.deny),
            *(("Always asked", f"{rule.text} (Claude Code's ask)") for rule in claude.ask),
            *(("Not used", line) for line in (*claude.unused, *claude.problems)),
        ]

    def save_words(self, command: str) -> str:
        """Save the commands starting with ``command``'s words for this folder.

        Raises ``ValueError`` (not plain words), ``SavedApprovalsError``."""
        scope = configured_scope(command)
        if self.saved is None:
            raise SavedApprovalsError("this session has no folder to save approvals for")
        self.saved.add(scope)
        return scope.describe_granted()

    def forget_saved(self) -> int:
        """Take back what was approved for good in this folder; how many there were.

        Raises ``SavedApprovalsError``."""
        return self.saved.forget() if self.saved is not None else 0

    def needs_approval(self, tool_name: str) -> bool:
        gated = tool_name in _GATED[self.policy] or (
            self.policy == "all" and tool_name in self.gated_as_all
        )
        return self.approver is not None and gated and tool_name not in self._always

    async def check(
        self,
        call_id: str,
        tool_name: str,
        args: dict[str, Any],
        hook: Literal["allow", "ask"] | None = None,
    ) -> str | None:
        """None to proceed, or the reason the call was refused. ``hook``: a PreToolUse
        hook's say: "allow" skips the policy's question (never a protected file's), "ask"
        asks where the policy would not (and refuses when nobody can answer)."""
        guarded = self.protected.check(tool_name, args) if self.protected else None
        if guarded is not None:
            return await _ask_protected(self, call_id, tool_name, args, guarded)
        command = args.get("command") if tool_name == "bash" else None
        asker = "A PreToolUse hook" if hook == "ask" else None
        if isinstance(command, str):
            if (denied := self.claude.denied_by(command)) is not None:
                return f"Not run: Claude Code's permissions.deny lists {one_line(denied, 200)}."
            if hook is None and (asks := self.claude.asked_by(command)) is not None:
                asker = f"Claude Code's permissions.ask ({one_line(asks, 200)})"
        if asker is not None and self.approver is None:
            return f"{asker} asks to approve this {tool_name} call; nobody can here."
        if hook == "allow" or self.approver is None:
            return None
        if asker is None and not self.needs_approval(tool_name):
            return None
        if not isinstance(command, str):
            scope = None
        elif asker is None and self._said_always(command):
            return None
        else:
            scope = command_scope(command)
        cwd = self.protected.cwd if self.protected else None
        preview = preview_for(tool_name, args, cwd=cwd)
        always = scope.describe() if scope is not None else f"every {tool_name} call"
        request = ApprovalRequest(
            call_id,
            tool_name,
            args,
            preview,
            always_means=always if asker is None else None,
            can_save=asker is None and scope is not None and self.saved is not None,
            asked_by=asker,
            **_origin(),
        )
        decision = await self.approver(request)
        if decision.kind in ("always", "project") and asker is None:
            if scope is None:
                self._always.add(tool_name)
                return None
            # Saved, it is listed (and forgotten) with the folder's; else the conversation's.
            if decision.kind != "project" or not self._saved_for_folder(scope):
                self._commands.append(scope)
            return None
        if decision.kind != "no":  # yes; or always where it is asked each time
            return None
        reason = (decision.reason or "").strip()
        return f"The user denied this {tool_name} call" + (f": {reason}" if reason else ".")

    def _said_always(self, command: str) -> bool:
        if any(said.covers(command) for said in (*self._commands, *self.configured)):
            return True
        if self.claude.approves(command):
            return True
        return self.saved is not None and self.saved.covers(command)

    def _saved_for_folder(self, scope: CommandScope) -> bool:
        if self.saved is None:
            return False
        try:
            self.saved.add(scope)
        except SavedApprovalsError as exc:
            if self._notify is not None:
                self._notify(f"Approved for this conversation only, not saved: {exc}")
            return False
        return True

    async def escalate(
        self, command: str, blocked: str
    ) -> Literal["once", "network", "no", "unasked"]:
        """Run ``command``, blocked by the sandbox, outside it? Asked whatever the policy."""
        if self.escalator is None:
            return "unasked"
        args = {"command": command}
        preview = preview_for("bash", args)
        request = ApprovalRequest("", "bash", args, preview, blocked, **_origin())
        decision = await self.escalator(request)
        if decision.kind == "yes":
            return "once"
        return "network" if decision.kind == "always" else "no"


def standard_gate(
    policy: ApprovalPolicy,
    approver: Approver | None,
    paths: Paths,
    cwd: Path,
    *,
    allow_commands: Iterable[str] = (),
    project_trusted: bool = False,
    notify: Callable[[str], None] | None = None,
) -> ApprovalGate:
    """A session's gate: protected paths, this folder's saved approvals, your config's
    ``allow_commands`` (validated with the settings) and Claude Code's rules."""
    return ApprovalGate(
        policy,
        approver,
        ProtectedPaths.standard(paths, cwd),
        saved=SavedApprovals.for_folder(paths, cwd),
        configured=tuple(configured_scope(entry) for entry in allow_commands),
        claude=read_claude_rules(cwd, trusted=project_trusted),
        notify=notify,
    )


def offer_escalation(tools: Iterable[object], gate: ApprovalGate) -> None:
    """Let sandboxed tools (bash's ``sandbox``) ask through ``gate`` to leave the sandbox.

    Matched by shape: the session does not import tools."""
    for tool in tools:
        sandbox = getattr(tool, "sandbox", None)
        if sandbox is not None and hasattr(sandbox, "escalate"):
            sandbox.escalate = gate.escalate
            if sandbox not in gate.sandboxes:  # a subagent offers its parent's tools again
                gate.sandboxes.append(sandbox)


def preview_for(tool_name: str, args: dict[str, Any], *, cwd: Path | None = None) -> str:
    """What the person approves, spelled out (``picode.ai.untrusted.visible``); a path
    that leads elsewhere through a symlink names where (``write link.txt → ~/.bashrc``)."""
    if tool_name == "bash":
        return visible(str(args.get("command", "")), mark_newlines=True)
    path = _shown_path(str(args.get("path", "")), cwd)
    if tool_name == "write":
        content = str(args.get("content", ""))
        lines = _lines(content)
        head = "\n".join(f"+{visible(line)}" for line in lines[:40])
        more = f"\n… {len(lines) - 40} more lines" if len(lines) > 40 else ""
        return f"write {path} ({len(lines)} lines)\n{head}{more}"
    if tool_name == "edit":
        edits = args.get("edits") or [
            {"old_text": args.get("old_text", ""), "new_text": args.get("new_text", "")}
        ]
        chunks = [f"edit {path}"]
        for edit in edits:
            old = _lines(str(edit.get("old_text", "")))
            new = _lines(str(edit.get("new_text", "")))
            chunks.append(
                "\n".join(
                    [*(f"-{visible(line)}" for line in old), *(f"+{visible(line)}" for line in new)]
                )
            )
        return "\n".join(chunks)
    import json

    return visible(f"{tool_name} {json.dumps(args, ensure_ascii=False, indent=2)}")


def _shown_path(raw: str, cwd: Path | None) -> str:
    shown = visible(raw, mark_newlines=True).replace("\n", "")
    if cwd is None or not raw.strip():
        return shown
    target = resolve_target(cwd, raw)
    if target != Path(os.path.normpath(_joined(cwd, raw))):
        return f"{shown} → {visible(str(target), mark_newlines=True)}".replace("\n", "")
    return shown


def _lines(text: str) -> list[str]:
    # Not splitlines(): it would also break at \r, \x0b, \x1c… and hide them from the preview.
    lines = text.split("\n")
    if not lines[-1]:
        lines.pop()
    return lines


# --- protected paths: asked about in every approval mode ------------------------------

#: Tools that change a file named by their ``path`` argument.
CHANGING_TOOLS = frozenset({"write", "edit"})
#: Inside any ``.git`` folder: what git runs, and the file that can name what git runs.
_GIT = {
    "hooks": "git hooks (programs git runs)",
    "config": "a git config (it can name programs git runs)",
}


def _joined(cwd: Path, raw: str) -> str:
    # As the tools read a path (tools/_paths.resolve_path): "@" mentions, "~", cwd-relative.
    text = raw.strip()
    if text.startswith("@") and len(text) > 1:
        text = text[1:]
    expanded = os.path.expanduser(text)
    return expanded if os.path.isabs(expanded) else os.path.join(cwd, expanded)


def resolve_target(cwd: Path, raw: str) -> Path:
    """The file a write of ``raw`` lands in: ``..`` and every symlink resolved."""
    return Path(os.path.realpath(_joined(cwd, raw)))


@dataclass(frozen=True, slots=True)
class ProtectedPaths:
    """Paths a write or edit always asks about: (resolved folder or file, what it is)."""

    cwd: Path
    roots: tuple[tuple[Path, str], ...]

    @classmethod
    def standard(cls, paths: Paths, cwd: Path, home: Path | None = None) -> ProtectedPaths:
        home = home if home is not None else Path.home()
        named = [
            (paths.config_dir, "picode's config folder (settings, keys, extensions)"),
            (paths.data_dir, "picode's data folder (sessions, trust decisions)"),
            (project_dir(cwd), "this project's .picode folder"),
            *((home / name, "a file or folder of keys") for name in KEY_LOCATIONS),
            *((home / name, "a shell start-up file") for name in SHELL_STARTUP_FILES),
        ]
        return cls(cwd, tuple((Path(os.path.realpath(path)), what) for path, what in named))

    def check(self, tool_name: str, args: dict[str, Any]) -> tuple[Path, str] | None:
        """(the real target, what it is) when this call would change a protected path."""
        raw = args.get("path")
        if tool_name not in CHANGING_TOOLS or not isinstance(raw, str) or not raw.strip():
            return None
        target = resolve_target(self.cwd, raw)
        for root, what in self.roots:
            if target == root or root in target.parents:
                return target, what
        parts = target.parts
        for index, part in enumerate(parts[:-1]):
            if part == ".git" and parts[index + 1] in _GIT:
                return target, _GIT[parts[index + 1]]
        return None


def _refusal(tool_name: str, target: Path, what: str, reason: str) -> str:
    shown = visible(str(target), mark_newlines=True).replace("\n", "")
    return (
        f"The {tool_name} of {shown} was not allowed: it is {what}, which picode always asks "
        f"about, whatever the approval mode; {reason}"
    )


async def _ask_protected(
    gate: ApprovalGate, call_id: str, tool_name: str, args: dict[str, Any], found: tuple[Path, str]
) -> str | None:
    target, what = found
    if gate.approver is None:
        return _refusal(tool_name, target, what, "there is no one to ask in this mode.")
    cwd = gate.protected.cwd if gate.protected else None
    preview = preview_for(tool_name, args, cwd=cwd)
    decision = await gate.approver(
        ApprovalRequest(call_id, tool_name, args, preview, protected=what, **_origin())
    )
    # "always" is taken as yes for this call only: a protected path is asked about each time.
    if decision.kind in ("yes", "always"):
        return None
    reason = (decision.reason or "").strip()
    return _refusal(
        tool_name, target, what, f"it was not approved{': ' + reason if reason else '.'}"
    )
