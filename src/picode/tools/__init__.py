"""Coding tools: read, bash, edit, write, grep, find, ls, and todo (the model's checklist).

Each tool is a class taking the session's working folder; paths given to a tool resolve
against it and ``~`` expands. ``coding_tools`` builds a set of them. read, write and edit
reach file contents through a ``FileAccess`` (file_access.py): the disk unless a front end
passes another.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from picode.agent.tool import AgentTool
from picode.tools.bash import BashTool
from picode.tools.edit import EditTool
from picode.tools.file_access import DISK, DiskFiles, FileAccess
from picode.tools.find import FindTool
from picode.tools.grep import GrepTool
from picode.tools.ls import LsTool
from picode.tools.read import ReadTool
from picode.tools.sandbox import Sandbox, SandboxConfig
from picode.tools.todo import TodoTool
from picode.tools.write import WriteTool

_FACTORIES: dict[str, Callable[[Path, FileAccess], AgentTool]] = {
    "read": ReadTool,
    "bash": lambda cwd, _files: BashTool(cwd),
    "edit": EditTool,
    "write": WriteTool,
    "grep": lambda cwd, _files: GrepTool(cwd),
    "find": lambda cwd, _files: FindTool(cwd),
    "ls": lambda cwd, _files: LsTool(cwd),
    "todo": lambda cwd, _files: TodoTool(cwd),
}

ALL_TOOL_NAMES: tuple[str, ...] = tuple(_FACTORIES)

__all__ = [
    "ALL_TOOL_NAMES",
    "DISK",
    "BashTool",
    "DiskFiles",
    "EditTool",
    "FileAccess",
    "FindTool",
    "GrepTool",
    "LsTool",
    "ReadTool",
    "Sandbox",
    "SandboxConfig",
    "TodoTool",
    "WriteTool",
    "coding_tools",
]


def coding_tools(
    cwd: Path,
    *,
    names: Sequence[str] | None = None,
    bash_timeout_s: float | None = None,
    bash_env: Mapping[str, str] | None = None,
    files: FileAccess = DISK,
    sandbox: SandboxConfig | None = None,
) -> list[AgentTool]:
    """Tools working in ``cwd``, in the order of ``names`` (default: all, ``ALL_TOOL_NAMES``);
    ``bash_timeout_s``: bash's limit when the model gives none (None: its default);
    ``bash_env``: the environment of bash's commands (None: picode's own);
    ``files``: where read, write and edit get and put file contents; ``sandbox``: what
    confines bash (None: nothing)."""
    wanted = ALL_TOOL_NAMES if names is None else tuple(dict.fromkeys(names))
    unknown = [name for name in wanted if name not in _FACTORIES]
    if unknown:
        raise ValueError(
            f"Unknown tool name(s): {', '.join(unknown)}. Known: {', '.join(ALL_TOOL_NAMES)}."
        )
    tools = [_FACTORIES[name](cwd, files) for name in wanted]
    for tool in tools:
        if isinstance(tool, BashTool) and bash_timeout_s is not None:
            tool.default_timeout_s = bash_timeout_s
        if isinstance(tool, BashTool) and sandbox is not None:
            tool.sandbox = Sandbox(sandbox)
        if isinstance(tool, BashTool) and bash_env is not None:
            tool.env = dict(bash_env)
    return tools
