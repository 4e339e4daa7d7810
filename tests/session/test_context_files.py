"""Context files are read bounded, and never through a link leaving the project."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from picode.ai.providers.faux import text_turn
from picode.session.events import Notice
from picode.session.system_prompt import MAX_CONTEXT_FILE_BYTES, build_system_prompt

from .conftest import SessionHarness, run

pytestmark = pytest.mark.skipif(os.name != "posix", reason="symlinks and sparse files")


def prompt_of(cwd: Path, config_dir: Path) -> tuple[str, list[str]]:
    problems: list[str] = []
    text = build_system_prompt(cwd=cwd, config_dir=config_dir, tools=[], problems=problems)
    return text, problems


def test_a_context_file_linking_outside_the_project_is_refused_and_named(
    tmp_path: Path,
) -> None:
    secret = tmp_path / "home" / ".ssh" / "id_rsa"
    secret.parent.mkdir(parents=True)
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY----- s3cr3t", encoding="utf-8")
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    (project / "AGENTS.md").symlink_to(secret)
    text, problems = prompt_of(project, tmp_path / "cfg")
    assert "s3cr3t" not in text
    assert len(problems) == 1
    assert f"{project / 'AGENTS.md'} was not read: it is a link to {secret}" in problems[0]


def test_a_link_inside_the_project_is_read(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    (project / "docs").mkdir()
    (project / "docs" / "agents.md").write_text("Use tabs.", encoding="utf-8")
    sub = project / "pkg"
    sub.mkdir()
    (sub / "AGENTS.md").symlink_to(project / "docs" / "agents.md")
    text, problems = prompt_of(sub, tmp_path / "cfg")
    assert "Use tabs." in text
    assert problems == []


def test_the_users_own_file_may_not_link_outside_the_config_folder(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text("from elsewhere", encoding="utf-8")
    config = tmp_path / "cfg"
    config.mkdir()
    (config / "AGENTS.md").symlink_to(outside)
    (config / "APPEND_SYSTEM.md").symlink_to(outside)
    project = tmp_path / "repo"
    project.mkdir()
    text, problems = prompt_of(project, config)
    assert "from elsewhere" not in text
    assert len(problems) == 2


def test_a_huge_context_file_is_read_up_to_the_cap_with_a_notice(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    big = project / "AGENTS.md"
    with big.open("wb") as handle:
        handle.write(b"Start here.\n")
        handle.truncate(64 * 1024 * 1024)  # sparse: nothing written for the hole
    text, problems = prompt_of(project, tmp_path / "cfg")
    assert "Start here." in text
    assert len(text) < MAX_CONTEXT_FILE_BYTES + 4096
    assert any("larger than 256 kB" in problem for problem in problems)


def test_the_session_tells_the_person(harness: SessionHarness, tmp_path: Path) -> None:
    target = tmp_path / "outside.md"
    target.write_text("outside", encoding="utf-8")
    (harness.cwd / "AGENTS.md").symlink_to(target)

    async def scenario() -> None:
        session = await harness.open(harness.faux(text_turn("ok")))
        await session.prompt("hi")
        await session.close()

    run(scenario())
    notices = [event.text for event in harness.of_type(Notice)]
    assert any("was not read: it is a link to" in text for text in notices)
