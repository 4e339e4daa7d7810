"""Running tools from sync tests, and checking that process groups are really gone."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest

from picode.agent.tool import AgentTool, ToolError, ToolResult
from picode.ai.abort import AbortSignal


async def call(
    tool: AgentTool,
    signal: AbortSignal | None = None,
    updates: list[ToolResult] | None = None,
    **arguments: Any,
) -> ToolResult:
    """Validate ``arguments`` like the agent loop does, then execute the tool."""
    args = tool.validate(arguments)
    sink = updates.append if updates is not None else (lambda _result: None)
    return await tool.execute("call-1", args, signal or AbortSignal(), sink)


def run(tool: AgentTool, **arguments: Any) -> ToolResult:
    return asyncio.run(call(tool, **arguments))


def run_error(tool: AgentTool, **arguments: Any) -> str:
    with pytest.raises(ToolError) as info:
        run(tool, **arguments)
    return str(info.value)


def _live_member(pgid: int) -> bool:
    # Orphaned members are reaped by init; in some containers init never reaps, so a
    # zombie (state Z) counts as gone: it runs nothing and holds nothing.
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def has_child_named(name: str) -> bool:
    """Whether this process has a running child called ``name`` (Linux /proc)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
        except OSError:
            continue
        command = stat[stat.find(b"(") + 1 : stat.rfind(b")")].decode(errors="replace")
        fields = stat[stat.rfind(b")") + 2 :].split()
        if command == name and int(fields[1]) == os.getpid() and fields[0] != b"Z":
            return True
    return False


def sleeps_of(seconds: str) -> list[int]:
    """Live ``sleep <seconds>`` processes, whatever their group or PID namespace (Linux)."""
    wanted = [b"sleep", seconds.encode()]
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            stat = (entry / "stat").read_bytes()
        except OSError:
            continue
        state = stat[stat.rfind(b")") + 2 :].split()[0]
        if argv[:2] == wanted and state not in (b"Z", b"X"):
            found.append(int(entry.name))
    return found


def group_running(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return _live_member(pgid)


def wait_until_group_gone(pgid: int, timeout: float = 10.0) -> bool:
    """Poll until no member of ``pgid`` runs; False if one still does after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not group_running(pgid):
            return True
        time.sleep(0.02)
    return not group_running(pgid)


def write_tree(root: Path, files: dict[str, str | bytes]) -> None:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")
