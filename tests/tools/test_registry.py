from __future__ import annotations

from pathlib import Path

import pytest

from picode.agent.tool import AgentTool, ToolArgumentsError, tool_spec
from picode.tools import ALL_TOOL_NAMES, coding_tools
from picode.tools._output import OutputCapture
from picode.tools._paths import display_path, resolve_path


def test_all_tools_are_built_in_order(tmp_path: Path) -> None:
    tools = coding_tools(tmp_path)
    assert [tool.name for tool in tools] == list(ALL_TOOL_NAMES)
    assert set(ALL_TOOL_NAMES) == {"read", "bash", "edit", "write", "grep", "find", "ls", "todo"}
    for tool in tools:
        assert isinstance(tool, AgentTool)
        spec = tool_spec(tool)
        assert spec.description.strip()
        assert spec.parameters["type"] == "object"
        assert spec.parameters["properties"]


def test_a_schema_is_built_once_and_has_no_titles(tmp_path: Path) -> None:
    """Every request sends every schema: two sessions' tools share one schema per tool."""
    first, second = coding_tools(tmp_path), coding_tools(tmp_path / "other")
    for one, other in zip(first, second, strict=True):
        assert tool_spec(one).parameters is tool_spec(other).parameters
        schema = one.parameters
        assert "title" not in schema
        assert all("title" not in prop for prop in schema["properties"].values())


def test_a_subset_follows_the_requested_order(tmp_path: Path) -> None:
    assert [t.name for t in coding_tools(tmp_path, names=["ls", "read", "ls"])] == ["ls", "read"]


def test_unknown_names_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"Unknown tool name.*websearch"):
        coding_tools(tmp_path, names=["read", "websearch"])


def test_unknown_arguments_are_refused(tmp_path: Path) -> None:
    (read,) = coding_tools(tmp_path, names=["read"])
    with pytest.raises(ToolArgumentsError, match="'file' is not a parameter"):
        read.validate({"path": "a", "file": "b"})


def test_path_resolution_and_display(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert resolve_path(tmp_path, "a/../b.txt") == tmp_path / "b.txt"
    assert resolve_path(tmp_path, "@src/x.py") == tmp_path / "src/x.py"
    assert resolve_path(tmp_path, "~/x") == tmp_path / "home/x"
    assert resolve_path(tmp_path, "/etc/hosts") == Path("/etc/hosts")
    assert display_path(tmp_path, tmp_path / "src/x.py") == "src/x.py"
    assert display_path(tmp_path, tmp_path) == "."
    sibling = str(tmp_path) + "-sibling/x"
    assert display_path(tmp_path, sibling) == sibling


def test_output_capture_memory_is_bounded() -> None:
    capture = OutputCapture(max_lines=2000, max_bytes=50 * 1024)
    chunk = (b"y" * 99 + b"\n") * 655
    for _ in range(800):
        capture.feed(chunk)
    assert capture.total_bytes == 800 * len(chunk)
    # What stays between reads: at most the limit plus the chunk that crossed it.
    assert capture.peak_buffered_bytes <= 50 * 1024 + len(chunk)
    tail = capture.render()
    assert tail.truncated
    assert tail.text.split("\n")[-1] == "y" * 99
    assert len(tail.text.encode()) <= 50 * 1024
    log_path = capture.log_path
    assert log_path is not None
    capture.close(keep_log=True)
    try:
        assert Path(log_path).stat().st_size == capture.total_bytes
    finally:
        Path(log_path).unlink()
