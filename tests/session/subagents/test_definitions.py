"""Agent definitions: parsing, the folders they are found in, precedence, broken files."""

from __future__ import annotations

from pathlib import Path

import pytest

from picode.session.subagents.definitions import (
    DEFAULT_TOOLS,
    READ_ONLY_TOOLS,
    discover_agents,
    open_agents,
)


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path, Path]:
    config, cwd, home = tmp_path / "config", tmp_path / "project", tmp_path / "home"
    for folder in (config, cwd, home):
        folder.mkdir()
    return config, cwd, home


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_builtins_are_general_and_read_only_explore(dirs: tuple[Path, Path, Path]) -> None:
    found = discover_agents(*dirs)
    assert list(found.agents) == ["general", "explore"]
    assert found.agents["general"].tools == DEFAULT_TOOLS
    assert found.agents["explore"].tools == READ_ONLY_TOOLS
    assert found.problems == []


def test_a_definition_reads_every_field(dirs: tuple[Path, Path, Path]) -> None:
    config, cwd, home = dirs
    write(
        config / "agents",
        "reviewer.md",
        "---\nname: reviewer\ndescription: Reviews a diff\ntools: [read, grep]\n"
        "model: anthropic/claude-sonnet-4-5\nthinking: high\n---\nBe strict.\n",
    )
    agent = discover_agents(config, cwd, home).agents["reviewer"]
    assert agent.description == "Reviews a diff"
    assert agent.tools == ("read", "grep")
    assert agent.model == "anthropic/claude-sonnet-4-5"
    assert agent.thinking == "high"
    assert agent.instructions == "Be strict."
    assert agent.source == "user"


def test_claude_code_files_work_as_they_are(dirs: tuple[Path, Path, Path]) -> None:
    config, cwd, home = dirs
    write(
        cwd / ".claude" / "agents",
        "finder.md",
        "---\nname: finder\ndescription: Finds\ntools: Read, Grep, Glob, Bash\n"
        "model: inherit\n---\nFind things.\n",
    )
    agent = discover_agents(config, cwd, home).agents["finder"]
    assert agent.tools == ("read", "grep", "find", "bash")
    assert agent.model is None
    assert agent.source == "project"


def test_no_tools_means_the_default_and_the_name_defaults_to_the_file(
    dirs: tuple[Path, Path, Path],
) -> None:
    config, cwd, home = dirs
    write(cwd / ".picode" / "agents", "helper.md", "---\ndescription: Helps\n---\nHelp.\n")
    agent = discover_agents(config, cwd, home).agents["helper"]
    assert agent.tools == DEFAULT_TOOLS


def test_project_replaces_the_persons_definition_of_a_name(
    dirs: tuple[Path, Path, Path],
) -> None:
    config, cwd, home = dirs
    write(home / ".claude" / "agents", "a.md", "---\nname: a\ndescription: home\n---\n")
    write(config / "agents", "a.md", "---\nname: a\ndescription: config\n---\n")
    assert discover_agents(config, cwd, home).agents["a"].description == "config"
    write(cwd / ".picode" / "agents", "a.md", "---\nname: a\ndescription: project\n---\n")
    assert discover_agents(config, cwd, home).agents["a"].description == "project"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no front matter", "front matter"),
        ("---\nname: x\n---\nbody", "no 'description'"),
        ("---\nname: 'bad name!'\ndescription: d\n---\n", "must be letters"),
        ("---\ndescription: d\nthinking: loud\n---\n", "'thinking' is 'loud'"),
        ("---\ndescription: d\ntools: []\n---\n", "lists no tool"),
        ("---\ndescription: [a, b]\n---\n", "must be text"),
    ],
)
def test_a_broken_file_is_left_out_with_one_warning(
    dirs: tuple[Path, Path, Path], text: str, reason: str
) -> None:
    config, cwd, home = dirs
    path = write(config / "agents", "broken.md", text)
    write(config / "agents", "good.md", "---\ndescription: fine\n---\n")
    told: list[tuple[str, str, str]] = []
    found = open_agents(config, cwd, lambda *args: told.append(args), home=home)
    assert "broken" not in found.agents and "good" in found.agents
    assert len(told) == 1
    message, level, source = told[0]
    assert str(path) in message and reason in message
    assert (level, source) == ("warning", "agents")


def test_an_unreadable_file_is_a_warning(dirs: tuple[Path, Path, Path]) -> None:
    config, cwd, home = dirs
    (config / "agents").mkdir()
    (config / "agents" / "bin.md").write_bytes(b"---\ndescription: \xff\xfe\n---\n")
    found = discover_agents(config, cwd, home)
    assert len(found.problems) == 1 and "cannot be read" in found.problems[0]


def test_an_untrusted_projects_agents_are_listed_as_context_not_gated(
    tmp_path: Path,
) -> None:
    from picode.session.paths import resolve_paths
    from picode.session.safety.trust import assess_project

    paths = resolve_paths({"PICODE_HOME": str(tmp_path / "home")})
    cwd = tmp_path / "project"
    write(cwd / ".claude" / "agents", "finder.md", "---\ndescription: Finds\n---\n")
    write(cwd / ".picode" / "agents", "reviewer.md", "---\ndescription: Reviews\n---\n")
    (cwd / ".picode" / "SYSTEM.md").write_text("gated", encoding="utf-8")
    trust = assess_project(paths, cwd)
    assert not trust.trusted and trust.needs_answer
    assert [(i.source, i.description) for i in trust.context if "agents" in i.source] == [
        (".picode/agents", "adds 1 agent(s) the model may hand tasks to: reviewer"),
        (".claude/agents", "adds 1 agent(s) the model may hand tasks to: finder"),
    ]
    assert all("agents" not in item.source for item in trust.items)
