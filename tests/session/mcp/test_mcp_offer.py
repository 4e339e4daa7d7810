"""Which of a server's tools are offered to the model, without starting the server."""

from __future__ import annotations

from pathlib import Path

from mcp import types

from picode.session.config.mcp import McpServer
from picode.session.mcp.manager import McpManager


def test_a_tool_that_runs_only_as_a_task_is_not_offered(tmp_path: Path) -> None:
    manager = McpManager(
        {"files": McpServer(command="never-started")}, tmp_path, on_change=lambda: None
    )
    schema = {"type": "object", "properties": {}}
    [connection] = manager._connections
    connection.tools = [
        types.Tool(name="plain", input_schema=schema),
        types.Tool(
            name="optional",
            input_schema=schema,
            execution=types.ToolExecution(task_support="optional"),
        ),
        types.Tool(
            name="task_only",
            input_schema=schema,
            execution=types.ToolExecution(task_support="required"),
        ),
    ]
    assert [tool.name for tool in manager.tools()] == ["mcp__files__plain", "mcp__files__optional"]


def test_only_a_tool_its_server_annotates_read_only_runs_in_plan_mode(tmp_path: Path) -> None:
    from picode.agent.tool import is_read_only

    manager = McpManager(
        {"files": McpServer(command="never-started")}, tmp_path, on_change=lambda: None
    )
    schema = {"type": "object", "properties": {}}
    [connection] = manager._connections
    connection.tools = [
        types.Tool(name="plain", input_schema=schema),
        types.Tool(
            name="looks",
            input_schema=schema,
            annotations=types.ToolAnnotations(read_only_hint=True),
        ),
        types.Tool(
            name="writes",
            input_schema=schema,
            annotations=types.ToolAnnotations(read_only_hint=False),
        ),
    ]
    assert {tool.name: is_read_only(tool) for tool in manager.tools()} == {
        "mcp__files__plain": False,
        "mcp__files__looks": True,
        "mcp__files__writes": False,
    }
