"""Settings from ``config.toml`` (user) merged with ``.picode/config.toml`` (project)
(docs/configuration.md).

A broken file never stops picode: a TOML syntax error skips that file, a bad value falls
back (to the user file's value, then the default) and every problem names file, line and key.
"""

from __future__ import annotations

import copy
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from picode.agent.queue_mode import QueueMode
from picode.ai.models import ThinkingLevel, builtin_registry
from picode.session.config.claude_hooks import SWITCH, add_claude_hooks
from picode.session.config.gates import FAIL_SAFE, Gate, project_gates
from picode.session.config.hooks import HOOK_EVENTS, HookEvent, HookSpec
from picode.session.config.limits import LimitSettings
from picode.session.config.lines import (
    Loc,
    dotted,
    key_lines,
    line_of,
    salvage_safety_keys,
    syntax_error_line,
)
from picode.session.config.mcp import McpServer, McpSettings
from picode.session.config.notifications import NotificationSettings
from picode.session.config.sandbox import SandboxSettings, clamp_project
from picode.session.paths import Paths, project_dir
from picode.session.safety.approval import ApprovalPolicy
from picode.session.safety.saved_approvals import CommandWords

__all__ = [
    "CompactionSettings",
    "ConfigProblem",
    "CustomModel",
    "CustomProvider",
    "EditGuardSettings",
    "LoadedConfig",
    "McpServer",
    "McpSettings",
    "NotificationSettings",
    "RedactionSettings",
    "RetrySettings",
    "SandboxSettings",
    "Settings",
    "ToolsSettings",
    "TtsrSettings",
    "load_config",
    "project_config_gates",
]

ApiName: TypeAlias = Literal[
    "openai-completions", "anthropic-messages", "openai-responses", "google-generative-ai"
]
CONFIG_FILE_NAME = "config.toml"


class _Section(BaseModel):
    # Unknown keys are reported as warnings by load_config, then dropped.
    model_config = ConfigDict(extra="forbid")


class RetrySettings(_Section):
    enabled: bool = True
    max_retries: int = Field(default=3, ge=0)
    base_delay_ms: int = Field(default=2000, ge=0)
    max_delay_ms: int = Field(default=60000, ge=0)


class CompactionSettings(_Section):
    enabled: bool = True
    reserve_tokens: int = Field(default=16384, ge=0)
    keep_recent_tokens: int = Field(default=20000, ge=0)


class TtsrSettings(_Section):
    enabled: bool = True
    once_per_session: bool = True


class EditGuardSettings(_Section):
    enabled: bool = True


class CheckpointSettings(_Section):
    """Checkpoints of the working tree before each message, for /rewind and /undo."""

    enabled: bool = True


class BashSettings(_Section):
    #: Seconds a command may run when the model gives no timeout; 0 = no limit.
    default_timeout_s: float = Field(default=600, ge=0)
    #: Variables the model's commands keep although they look secret (names or ``*``
    #: patterns); the user's config only.
    env_allow: list[str] = Field(default_factory=list)


class RedactionSettings(_Section):
    #: Token shapes masked in what tools return to the model (picode's own keys always are);
    #: the user's config only.
    tool_results: bool = True


class ToolsSettings(_Section):
    #: Tool calls of one reply that run at the same time; the rest wait their turn.
    max_parallel: int = Field(default=8, ge=1)


class SubagentSettings(_Section):
    """The ``task`` tool (docs/subagents.md)."""

    enabled: bool = True
    #: Subagents of one reply that run at the same time; the rest wait their turn.
    max_parallel: int = Field(default=4, ge=1)


def _text_only() -> list[Literal["text", "image"]]:
    return ["text"]


class CustomModel(_Section):
    id: str = Field(min_length=1)
    name: str | None = None
    context_window: int = Field(default=128000, gt=0)
    max_tokens: int = Field(default=16384, gt=0)
    reasoning: bool = False
    input: list[Literal["text", "image"]] = Field(default_factory=_text_only)
    cost: dict[Literal["input", "output", "cache_read", "cache_write"], float] = Field(
        default_factory=dict
    )
    """US dollars per million tokens."""


class CustomProvider(_Section):
    # Optional only for providers named like a built-in one (they inherit its api).
    api: ApiName | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    api_key: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    models: list[CustomModel] = Field(default_factory=list)


#: ``provider/id[:thinking]``: an alias names a model, not another alias (no loops).
ModelRef = Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^[^/\s]+/\S+$")]


class Settings(_Section):
    default_model: str | None = None
    #: What Ctrl+P cycles through: refs, aliases or glob patterns (``anthropic/*``,
    #: ``*sonnet*``); every model with a key when empty.
    enabled_models: list[str] = Field(default_factory=list)
    #: Names of your own for model references (``fast = "anthropic/claude-haiku-4-5"``),
    #: beside the built-in ``sonnet``, ``gpt``...; one of those names is replaced.
    model_aliases: dict[str, ModelRef] = Field(default_factory=dict)
    thinking: ThinkingLevel = "off"
    theme: str = "dark"
    approval: ApprovalPolicy = "never"
    #: Commands approval never asks about, in every folder (your own config.toml only).
    allow_commands: list[CommandWords] = Field(default_factory=list)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    compaction: CompactionSettings = Field(default_factory=CompactionSettings)
    ttsr: TtsrSettings = Field(default_factory=TtsrSettings)
    edit_guard: EditGuardSettings = Field(default_factory=EditGuardSettings)
    checkpoints: CheckpointSettings = Field(default_factory=CheckpointSettings)
    bash: BashSettings = Field(default_factory=BashSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    subagents: SubagentSettings = Field(default_factory=SubagentSettings)
    redaction: RedactionSettings = Field(default_factory=RedactionSettings)
    providers: dict[str, CustomProvider] = Field(default_factory=dict)
    mcp: McpSettings = Field(default_factory=McpSettings)
    #: Both files' hooks, the user's first (``load_config`` adds the lists up).
    hooks: dict[HookEvent, list[HookSpec]] = Field(default_factory=dict)
    #: Run Claude Code's hooks too (``config/claude_hooks.py``); your config.toml only.
    claude_hooks: bool = False
    notifications: NotificationSettings = Field(default_factory=NotificationSettings)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    steering_mode: QueueMode = "one-at-a-time"
    follow_up_mode: QueueMode = "one-at-a-time"


@dataclass
class ConfigProblem:
    file: Path
    line: int | None
    key: str | None
    message: str
    severity: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else str(self.file)
        if not self.key:
            return f"{where}: {self.message}"
        table, _, name = self.key.rpartition(".")
        key = f"[{table}] {name}" if table else name
        return f"{where}: {key}: {self.message}"


@dataclass
class LoadedConfig:
    settings: Settings
    problems: list[ConfigProblem] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    """The files that were read and applied (a file with a syntax error is not listed)."""
    #: Keys of an untrusted project's config that were left out.
    ignored: list[Gate] = field(default_factory=list)


@dataclass
class _Layer:
    file: Path
    data: dict[str, Any]
    lines: dict[Loc, int]


def load_config(paths: Paths, cwd: Path, *, project_trusted: bool = False) -> LoadedConfig:
    """Both files merged; an untrusted project's gated keys (``config_gates``) are left out."""
    problems: list[ConfigProblem] = []
    user = _read_layer(paths.user_config_file, problems, salvage=True)
    hooks: dict[HookEvent, list[HookSpec]] = {}
    _take_hooks(user, problems, hooks)
    project = _read_layer(project_dir(cwd) / CONFIG_FILE_NAME, problems)
    if project is not None:
        _drop_user_only(project, problems)
    layers = [layer for layer in (user, project) if layer is not None]
    if project is not None:
        _clamp_sandbox(user, project, problems)
    ignored: list[Gate] = []
    if project is not None and not project_trusted:
        # The user's own settings decide what counts as loosening; validated alone first.
        user_settings = _validate([user] if user else [], problems)
        ignored = gates_of(project.data, user_settings)
        for gate in ignored:
            _remove(project.data, gate.loc)
    _take_hooks(project, problems, hooks)  # what is left of it after the trust gates
    if user is not None and user.data.get(SWITCH) is True:
        for message in add_claude_hooks(hooks, cwd, trusted=project_trusted):
            problems.append(ConfigProblem(user.file, None, SWITCH, message, "warning"))
    settings = _validate(layers, problems)
    settings.hooks = hooks
    _drop_providers_without_api(settings, layers, problems)
    return LoadedConfig(settings, problems, [layer.file for layer in layers], ignored)


def _clamp_sandbox(user: _Layer | None, project: _Layer, problems: list[ConfigProblem]) -> None:
    """Trusted or not, a project may only tighten the sandbox (config_sandbox.py)."""
    mine = user.data.get("sandbox") if user is not None else None
    for key, why in clamp_project(mine, project.data):
        line = line_of(project.lines, tuple(key.split(".")))
        problems.append(ConfigProblem(project.file, line, key, f"ignored: {why}", "warning"))


#: Keys that widen what the model may see or run unasked, or what runs on picode's events:
#: a project never sets them, trusted or not.
USER_ONLY: tuple[Loc, ...] = (("bash", "env_allow"), ("redaction",), ("allow_commands",), (SWITCH,))


def _drop_user_only(project: _Layer, problems: list[ConfigProblem]) -> None:
    for loc in USER_ONLY:
        if _has(project.data, loc):
            line = line_of(project.lines, loc)
            message = "only your own config.toml may set this; ignored"
            problems.append(ConfigProblem(project.file, line, dotted(loc), message, "warning"))
            _remove(project.data, loc)


def gates_of(project: dict[str, Any], user: Settings) -> list[Gate]:
    """The keys of a project's config data that need the folder's trust."""
    mine = user.model_dump()
    return project_gates(
        project,
        user_approval=user.approval,
        user_providers=set(user.providers),
        builtin_providers=set(builtin_registry().providers),
        user_value=lambda loc: _walk(mine, loc)[1],
    )


def project_config_gates(paths: Paths, cwd: Path) -> list[Gate]:
    """``gates_of`` for the files on disk (what the trust question lists)."""
    problems: list[ConfigProblem] = []
    project = _read_layer(project_dir(cwd) / CONFIG_FILE_NAME, problems)
    if project is None:
        return []
    user = _read_layer(paths.user_config_file, problems, salvage=True)
    return gates_of(project.data, _validate([user] if user else [], problems))


def _read_layer(
    file: Path, problems: list[ConfigProblem], *, salvage: bool = False
) -> _Layer | None:
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        problems.append(ConfigProblem(file, None, None, "is a directory, not a file; ignored"))
        return None
    except (OSError, UnicodeDecodeError) as exc:
        if not salvage:
            problems.append(ConfigProblem(file, None, None, f"cannot be read ({exc}); ignored"))
            return None
        message = f"cannot be read ({exc}); approval = 'all' (the safest) until it is fixed"
        problems.append(ConfigProblem(file, None, None, message))
        return _Layer(file, {"approval": "all"}, {})
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = syntax_error_line(str(exc))
        kept = salvage_safety_keys(text) if salvage else {}
        if not kept:
            message = f"TOML syntax error: {exc}; file ignored"
        else:
            shown = ", ".join(f"{key} = {value!r}" for key, value in kept.items())
            message = f"TOML syntax error: {exc}; file ignored but for {shown}"
        problems.append(ConfigProblem(file, line, None, message))
        return _Layer(file, kept, key_lines(text)) if kept else None
    return _Layer(file, data, key_lines(text))


def _take_hooks(
    layer: _Layer | None, problems: list[ConfigProblem], into: dict[HookEvent, list[HookSpec]]
) -> None:
    """Move ``layer``'s ``[hooks]`` into ``into``, hook by hook: a broken hook is left out
    whole (a matcher dropped alone would make it run on everything), and the files' lists
    add up rather than one replacing the other."""
    if layer is None or "hooks" not in layer.data:
        return
    table = layer.data.pop("hooks")

    def problem(loc: Loc, message: str, severity: Literal["error", "warning"] = "error") -> None:
        line = line_of(layer.lines, loc)
        problems.append(ConfigProblem(layer.file, line, dotted(loc), message, severity))

    if not isinstance(table, dict):
        problem(("hooks",), "must be a table of events ([[hooks.PreToolUse]]); ignored")
        return
    for event, entries in table.items():
        if event not in HOOK_EVENTS:
            problem(("hooks", event), f"unknown event (one of {', '.join(HOOK_EVENTS)}); ignored")
            continue
        for index, entry in enumerate(entries if isinstance(entries, list) else [entries]):
            try:
                into.setdefault(event, []).append(HookSpec.model_validate(entry))
            except ValidationError as exc:
                error = exc.errors()[0]
                where: Loc = ("hooks", event, index, *error["loc"])
                problem(where, f"{error['msg']}; this hook is ignored")


def _validate(layers: list[_Layer], problems: list[ConfigProblem]) -> Settings:
    removed: set[tuple[Path, Loc]] = set()
    # Each round removes at least one offending value, so this ends; the cap guards oddities.
    for _ in range(500):
        merged: dict[str, Any] = {}
        for layer in layers:
            _deep_merge(merged, layer.data)
        try:
            return Settings.model_validate(merged)
        except ValidationError as exc:
            if not _drop_invalid(exc, layers, problems, removed):
                break
    file = layers[-1].file if layers else Path(CONFIG_FILE_NAME)
    problems.append(ConfigProblem(file, None, None, "unusable; defaults used"))
    return Settings()


def _drop_invalid(
    exc: ValidationError,
    layers: list[_Layer],
    problems: list[ConfigProblem],
    removed: set[tuple[Path, Loc]],
) -> bool:
    removals: list[tuple[_Layer, Loc]] = []
    replaced = False
    for error in exc.errors():
        loc: Loc = tuple(error["loc"])
        kind = error["type"]
        target = loc[:-1] if kind == "missing" else loc
        owners = [layer for layer in reversed(layers) if _has(layer.data, target)]
        if not owners:
            continue
        first = owners[0]
        if kind != "missing" and len(owners) == 1 and target in FAIL_SAFE:
            # A safety key with no usable value anywhere takes its safest one, not the default.
            safest = FAIL_SAFE[target]
            _set(first.data, target, safest)
            message = f"{error['msg']} (got {_show(error.get('input'))}); using {safest!r}"
            line = line_of(first.lines, target)
            problems.append(ConfigProblem(first.file, line, dotted(loc), message))
            replaced = True
            continue
        if kind != "missing":
            # Only the winning layer's value goes, so a lower layer's value can take over.
            owners = owners[:1]
        removals.extend((layer, target) for layer in owners)
        if kind == "missing" and (first.file, loc) in removed:
            continue  # its bad value was reported already; now the table goes too
        removed.add((first.file, loc))
        severity: Literal["error", "warning"] = "error"
        if kind == "missing":
            message = f"required key '{loc[-1]}' is missing; [{dotted(target)}] ignored"
            key = dotted(target)
        elif kind == "extra_forbidden":
            message, key, severity = "unknown key, ignored", dotted(loc), "warning"
        else:
            message = f"{error['msg']} (got {_show(error.get('input'))}); using the default"
            key = dotted(loc)
        line = line_of(first.lines, target)
        problems.append(ConfigProblem(first.file, line, key, message, severity))
    progressed = replaced
    # Later errors point at higher list indices: removing them first keeps indices valid.
    for layer, target in reversed(removals):
        progressed = _remove(layer.data, target) or progressed
    return progressed


def _drop_providers_without_api(
    settings: Settings, layers: list[_Layer], problems: list[ConfigProblem]
) -> None:
    missing = [name for name, p in settings.providers.items() if p.api is None]
    if not missing:
        return
    builtin = builtin_registry().providers
    for name in missing:
        if name in builtin:
            continue
        del settings.providers[name]
        loc: Loc = ("providers", name)
        owner = next((layer for layer in reversed(layers) if _has(layer.data, loc)), None)
        file = owner.file if owner else Path(CONFIG_FILE_NAME)
        line = line_of(owner.lines, loc) if owner else None
        message = (
            "a custom provider needs api = one of openai-completions, anthropic-messages, "
            "openai-responses, google-generative-ai; provider ignored"
        )
        problems.append(ConfigProblem(file, line, f"providers.{name}.api", message))


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _deep_merge(into: dict[str, Any], source: dict[str, Any]) -> None:
    for key, value in source.items():
        current = into.get(key)
        if isinstance(current, dict) and isinstance(value, dict):
            _deep_merge(current, value)
        else:
            into[key] = copy.deepcopy(value)


def _walk(data: Any, path: Loc) -> tuple[bool, Any]:
    node = data
    for part in path:
        in_list = isinstance(part, int) and isinstance(node, list) and 0 <= part < len(node)
        if in_list or (isinstance(part, str) and isinstance(node, dict) and part in node):
            node = node[part]
        else:
            return False, None
    return True, node


def _has(data: dict[str, Any], path: Loc) -> bool:
    return bool(path) and _walk(data, path)[0]


def _set(data: dict[str, Any], path: Loc, value: Any) -> None:
    found, parent = _walk(data, path[:-1])
    if found and isinstance(parent, dict) and isinstance(path[-1], str):
        parent[path[-1]] = value


def _remove(data: dict[str, Any], path: Loc) -> bool:
    found, parent = _walk(data, path[:-1])
    last = path[-1]
    if not found:
        return False
    if isinstance(parent, dict) and isinstance(last, str) and last in parent:
        del parent[last]
        return True
    if isinstance(parent, list) and isinstance(last, int) and 0 <= last < len(parent):
        del parent[last]
        return True
    return False
