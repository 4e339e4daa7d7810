"""The launcher composes the agent's tools (in-process: no child needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from picode.cli import build_parser
from picode.launch import prepare
from picode.session.paths import resolve_paths
from picode.tools import ALL_TOOL_NAMES, BashTool


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PICODE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return project


def test_every_built_in_tool_by_default_working_in_the_folder(isolated: Path) -> None:
    options = prepare(build_parser().parse_args(["-p", "hi"]), interactive=False).options

    assert [tool.name for tool in options.tools] == list(ALL_TOOL_NAMES)
    assert {tool.cwd for tool in options.tools} == {isolated}  # type: ignore[attr-defined]


def test_tools_flag_and_the_configured_bash_timeout_reach_the_tools() -> None:
    config = resolve_paths().user_config_file
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[bash]\ndefault_timeout_s = 42\n", encoding="utf-8")

    args = build_parser().parse_args(["-p", "--tools", "bash,read", "hi"])
    options = prepare(args, interactive=False).options

    assert [tool.name for tool in options.tools] == ["bash", "read"]
    (bash,) = [tool for tool in options.tools if isinstance(tool, BashTool)]
    assert bash.default_timeout_s == 42
