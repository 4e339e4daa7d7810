"""Agent definitions: what a subagent is told and which tools it gets (docs/subagents.md).

A definition is a Markdown file with front matter (``name``, ``description``, ``tools``,
``model``, ``thinking``) whose body is added to the child's system prompt. They are found in
the person's ``<config>/agents/`` and ``~/.claude/agents/``, then the project's
``.picode/agents/`` and ``.claude/agents/``; a later folder's definition replaces an earlier
one of the same name, as prompt templates do, and picode's own ``general`` and ``explore``
come first of all. The front matter is read by the parser skills, rules and templates share.
A file that cannot be used is left out with one warning; start-up goes on.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from picode.ai.models import THINKING_LEVELS, ThinkingLevel
from picode.session.paths import project_dir
from picode.session.recovery.front_matter import FrontMatterError, FrontValue, split_front_matter

Source = Literal["builtin", "user", "project"]

#: What a subagent may read with (and nothing that changes a file).
READ_ONLY_TOOLS: tuple[str, ...] = ("read", "grep", "find", "ls")
#: A definition that names no tools gets these: reading plus bash (which the approval policy
#: and the sandbox govern as they do the parent's).
DEFAULT_TOOLS: tuple[str, ...] = (*READ_ONLY_TOOLS, "bash")
#: A definition bigger than this is a mistake (a log saved as .md), not instructions.
MAX_BYTES = 256 * 1024
MAX_DESCRIPTION_CHARS = 1024

_NAME = re.compile(r"^[A-Za-z0-9][\w-]{0,63}$")
#: Claude Code's tool names, so its agent files work as they are.
CLAUDE_TOOL_NAMES = {
    "Read": "read",
    "Grep": "grep",
    "Glob": "find",
    "LS": "ls",
    "Bash": "bash",
    "Write": "write",
    "Edit": "edit",
    "MultiEdit": "edit",
}


@dataclass(frozen=True, slots=True)
class AgentDefinition:
    name: str
    description: str
    #: Added to the child's system prompt (the parent's rules and AGENTS.md stay).
    instructions: str = ""
    #: The tools the child may call, by name: a subset of the parent's ("task" never).
    tools: tuple[str, ...] = DEFAULT_TOOLS
    #: ``provider/id[:thinking]`` or an alias; None: the parent's model.
    model: str | None = None
    thinking: ThinkingLevel | None = None
    source: Source = "builtin"
    path: Path | None = None


BUILTIN_AGENTS: tuple[AgentDefinition, ...] = (
    AgentDefinition(
        "general",
        "A general-purpose agent for a self-contained job: research a question across the "
        "code, try something with bash, review a change. It reads and runs commands; it "
        "does not edit files.",
    ),
    AgentDefinition(
        "explore",
        "A fast read-only agent for finding things: where something is defined or used, how "
        "a part of the code works. It cannot run commands or change files.",
        "Your job is to search and read, then answer precisely: name files and line numbers.",
        tools=READ_ONLY_TOOLS,
    ),
)


@dataclass(slots=True)
class AgentDefinitions:
    agents: dict[str, AgentDefinition] = field(default_factory=dict)
    #: One line per file left out, or loaded with a caveat.
    problems: list[str] = field(default_factory=list)

    def get(self, name: str) -> AgentDefinition | None:
        return self.agents.get(name)


def agent_folders(config_dir: Path, cwd: Path, home: Path) -> list[tuple[Path, Source]]:
    """Lowest precedence first: a project's definition replaces the person's of that name."""
    return [
        (home / ".claude" / "agents", "user"),
        (config_dir / "agents", "user"),
        (cwd / ".claude" / "agents", "project"),
        (project_dir(cwd) / "agents", "project"),
    ]


def open_agents(
    config_dir: Path,
    cwd: Path,
    notify: Callable[[str, str, str], None],
    home: Path | None = None,
    *,
    project_trusted: bool = True,
) -> AgentDefinitions:
    """The session's definitions, each problem told once (a warning with source "agents").
    In a folder not trusted, the project's definitions keep the session's model."""
    found = discover_agents(config_dir, cwd, Path.home() if home is None else home)
    if not project_trusted:
        found = _session_model_only(found)
    for problem in found.problems:
        notify(problem, "warning", "agents")
    return found


def _session_model_only(found: AgentDefinitions) -> AgentDefinitions:
    """An untrusted project may narrow tools and add instructions, but not choose which
    model (or how much thinking) the person's keys pay for: another model is another bill."""
    agents = dict(found.agents)
    problems = list(found.problems)
    for name, agent in found.agents.items():
        if agent.source != "project" or (agent.model is None and agent.thinking is None):
            continue
        chosen = " and ".join(
            f"{what} {value}"
            for what, value in (("the model", agent.model), ("thinking", agent.thinking))
            if value is not None
        )
        agents[name] = replace(agent, model=None, thinking=None)
        problems.append(
            f"Agent '{name}' ({agent.path}) asks for {chosen}: this folder is not trusted, "
            "so it runs with the session's model and thinking."
        )
    return AgentDefinitions(agents, problems)


def discover_agents(config_dir: Path, cwd: Path, home: Path) -> AgentDefinitions:
    found = AgentDefinitions({agent.name: agent for agent in BUILTIN_AGENTS})
    seen: set[Path] = set()
    for folder, source in agent_folders(config_dir, cwd, home):
        try:
            real = folder.resolve()
            paths = sorted(folder.glob("*.md")) if folder.is_dir() else []
        except OSError as exc:
            found.problems.append(f"Agents folder {folder} cannot be read: {exc}")
            continue
        if real in seen:  # the home folder is the project: read it once
            continue
        seen.add(real)
        for path in paths:
            definition = read_definition(path, source, found.problems)
            if definition is not None:
                found.agents[definition.name] = definition
    return found


def read_definition(path: Path, source: Source, problems: list[str]) -> AgentDefinition | None:
    """The definition in ``path``, or None with the reason appended to ``problems``."""
    where = f"Agent definition {path}"
    try:
        if path.stat().st_size > MAX_BYTES:
            problems.append(f"{where} left out: larger than {MAX_BYTES} bytes.")
            return None
        text = path.read_text(encoding="utf-8")
        fields, body = split_front_matter(text)
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{where} left out: cannot be read ({exc}).")
        return None
    except FrontMatterError as exc:
        problems.append(f"{where} left out: front matter: {exc}.")
        return None
    try:
        return _definition(fields, body, path, source)
    except ValueError as exc:
        problems.append(f"{where} left out: {exc}.")
        return None


def _definition(
    fields: dict[str, FrontValue], body: str, path: Path, source: Source
) -> AgentDefinition:
    name = _text(fields, "name") or path.stem
    if not _NAME.match(name):
        raise ValueError(f"the name {name!r} must be letters, digits, '_' or '-' (at most 64)")
    description = " ".join(_text(fields, "description").split())
    if not description:
        raise ValueError("the front matter has no 'description' (the model chooses by it)")
    tools = _tools(fields.get("tools"))
    model = _text(fields, "model") or None
    if model == "inherit":
        model = None
    thinking_text = _text(fields, "thinking") or None
    thinking: ThinkingLevel | None = None
    if thinking_text is not None:
        if thinking_text not in THINKING_LEVELS:
            raise ValueError(
                f"'thinking' is {thinking_text!r}, not one of {', '.join(THINKING_LEVELS)}"
            )
        thinking = thinking_text  # type: ignore[assignment]  # checked just above
    return AgentDefinition(
        name=name,
        description=description[:MAX_DESCRIPTION_CHARS],
        instructions=body,
        tools=tools,
        model=model,
        thinking=thinking,
        source=source,
        path=path,
    )


def _text(fields: dict[str, FrontValue], key: str) -> str:
    value = fields.get(key, "")
    if isinstance(value, list):
        raise ValueError(f"'{key}' must be text, not a list")
    return value.strip()


def _tools(value: FrontValue | None) -> tuple[str, ...]:
    """``tools: read, grep`` (Claude Code's form) or a list; absent means the default."""
    if value is None or value == "":
        return DEFAULT_TOOLS
    items = value if isinstance(value, list) else value.split(",")
    stripped = (item.strip() for item in items)
    names = tuple(dict.fromkeys(CLAUDE_TOOL_NAMES.get(item, item) for item in stripped if item))
    if not names:
        raise ValueError("'tools' lists no tool")
    return names
