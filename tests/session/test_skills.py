"""Agent Skills: found in the user's and the project's skills folders, listed in the system
prompt by name, description and path (never their bodies), with one warning per bad skill."""

from __future__ import annotations

from pathlib import Path

import pytest

from picode.ai.providers.faux import text_turn
from picode.session.events import Notice
from picode.session.skills import discover_skills, invocation_text
from picode.session.skills.discovery import MAX_DESCRIPTION_CHARS, MAX_FRONT_MATTER_BYTES

from .conftest import SessionHarness, run


def write_skill(folder: Path, name: str, front: str | None = None, body: str = "") -> Path:
    path = folder / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    if front is None:
        front = f"name: {name}\ndescription: Does {name} things."
    path.write_text(f"---\n{front}\n---\n{body}", encoding="utf-8")
    return path


@pytest.fixture
def user_home(harness: SessionHarness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME of the test's own: discovery never reads the real ~/.claude/skills."""
    folder = tmp_path / "user"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


def discover(harness: SessionHarness, home: Path) -> tuple[list[str], list[str]]:
    found = discover_skills(harness.cwd, harness.paths.config_dir, home)
    return [skill.name for skill in found.skills], list(found.problems)


def test_the_request_carries_names_descriptions_and_paths_not_bodies(
    harness: SessionHarness, user_home: Path
) -> None:
    mine = write_skill(
        harness.paths.config_dir / "skills",
        "pdf-tools",
        "name: pdf-tools\ndescription: Fill in PDF forms.\nlicense: MIT\n"
        "metadata:\n  author: someone\n  version: '1.0'\nallowed-tools: [bash, read]",
        body="SECRET-BODY-ONE: run scripts/fill.py",
    )
    theirs = write_skill(
        harness.cwd / ".claude" / "skills",
        "release-notes",
        "name: release-notes\ndescription: >-\n  Write release notes\n  from git log.",
        body="SECRET-BODY-TWO",
    )
    faux = harness.faux(text_turn("ok"))

    async def scenario() -> None:
        session = await harness.open(faux)
        await session.prompt("hi")
        assert [skill.name for skill in session.skills] == ["pdf-tools", "release-notes"]
        await session.close()

    run(scenario())
    prompt = faux.last_request.system_prompt or ""
    assert "pdf-tools" in prompt and "Fill in PDF forms." in prompt and str(mine) in prompt
    assert "release-notes" in prompt and "Write release notes from git log." in prompt
    assert str(theirs) in prompt
    assert "SECRET-BODY" not in prompt
    assert not harness.of_type(Notice)


def test_no_read_tool_no_skills_in_the_prompt(harness: SessionHarness, user_home: Path) -> None:
    write_skill(harness.cwd / ".agents" / "skills", "lint")
    faux = harness.faux(text_turn("ok"))

    async def scenario() -> None:
        session = await harness.open(faux, tools=[])
        await session.prompt("hi")
        await session.close()

    run(scenario())
    assert "Does lint things." not in (faux.last_request.system_prompt or "")


def test_a_broken_skill_warns_once_and_the_session_opens(
    harness: SessionHarness, user_home: Path
) -> None:
    write_skill(harness.cwd / ".picode" / "skills", "broken", "name: [unclosed")
    write_skill(harness.cwd / ".picode" / "skills", "good")
    faux = harness.faux(text_turn("ok"), text_turn("ok"))

    async def scenario() -> None:
        session = await harness.open(faux)
        await session.prompt("hi")
        await session.prompt("again")
        assert [skill.name for skill in session.skills] == ["good"]
        await session.close()

    run(scenario())
    warnings = [n for n in harness.of_type(Notice) if n.source == "skills"]
    assert len(warnings) == 1
    assert warnings[0].level == "warning"
    assert "broken/SKILL.md" in warnings[0].text and "skipped" in warnings[0].text
    assert "Does good things." in (faux.last_request.system_prompt or "")


def test_the_first_of_a_name_wins_and_the_others_warn(
    harness: SessionHarness, user_home: Path
) -> None:
    write_skill(user_home / ".claude" / "skills", "deploy", body="user's")
    shadow = write_skill(harness.cwd / ".claude" / "skills", "deploy")
    found = discover_skills(harness.cwd, harness.paths.config_dir, user_home)
    assert [(s.name, s.scope) for s in found.skills] == [("deploy", "user")]
    assert len(found.problems) == 1
    assert str(shadow) in found.problems[0] and "already used by" in found.problems[0]


@pytest.mark.parametrize(
    "name", ["Deploy", "-deploy", "deploy-", "de--ploy", "de ploy", "a" * 65, "de_ploy"]
)
def test_a_name_against_the_spec_warns_and_is_skipped(
    harness: SessionHarness, user_home: Path, name: str
) -> None:
    write_skill(harness.cwd / ".agents" / "skills", "deploy", f"name: '{name}'\ndescription: x")
    names, problems = discover(harness, user_home)
    assert names == []
    assert len(problems) == 1 and "is not a skill name" in problems[0]


@pytest.mark.parametrize(
    ("front", "why"),
    [
        ("description: no name", "no 'name'"),
        ("name: deploy", "no 'description'"),
        ("name: deploy\ndescription: ''", "no 'description'"),
        ("name: [deploy]\ndescription: x", "must be text"),
    ],
)
def test_missing_fields_warn(
    harness: SessionHarness, user_home: Path, front: str, why: str
) -> None:
    write_skill(harness.cwd / ".agents" / "skills", "deploy", front)
    names, problems = discover(harness, user_home)
    assert names == []
    assert len(problems) == 1 and why in problems[0]


def test_a_quoted_description_over_lines_is_joined(
    harness: SessionHarness, user_home: Path
) -> None:
    front = 'name: deploy\ndescription: "Ship it: to staging\n  or production."\nlicense: MIT'
    write_skill(harness.cwd / ".agents" / "skills", "deploy", front)
    found = discover_skills(harness.cwd, harness.paths.config_dir, user_home)
    assert [s.description for s in found.skills] == ["Ship it: to staging or production."]
    assert found.problems == ()


def test_no_front_matter_warns(harness: SessionHarness, user_home: Path) -> None:
    path = harness.cwd / ".agents" / "skills" / "deploy" / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text("# Deploy\n\nJust a body.", encoding="utf-8")
    names, problems = discover(harness, user_home)
    assert names == [] and len(problems) == 1 and "no front matter" in problems[0]


def test_an_oversized_description_warns_and_is_cut(
    harness: SessionHarness, user_home: Path
) -> None:
    long = "word " * 400
    write_skill(harness.cwd / ".agents" / "skills", "big", f"name: big\ndescription: {long}")
    found = discover_skills(harness.cwd, harness.paths.config_dir, user_home)
    assert len(found.skills[0].description) <= MAX_DESCRIPTION_CHARS
    assert len(found.problems) == 1 and "more than 1024" in found.problems[0]


def test_a_name_other_than_its_folder_warns_but_loads(
    harness: SessionHarness, user_home: Path
) -> None:
    write_skill(harness.cwd / ".agents" / "skills", "folder", "name: other\ndescription: x")
    names, problems = discover(harness, user_home)
    assert names == ["other"]
    assert len(problems) == 1 and "differs from its folder's name" in problems[0]


def test_only_the_front_matter_of_a_huge_skill_is_read(
    harness: SessionHarness, user_home: Path
) -> None:
    path = write_skill(harness.cwd / ".agents" / "skills", "huge")
    with path.open("a", encoding="utf-8") as handle:
        handle.write("x" * (4 * MAX_FRONT_MATTER_BYTES))
    unclosed = harness.cwd / ".agents" / "skills" / "open" / "SKILL.md"
    unclosed.parent.mkdir()
    unclosed.write_text("---\nname: open\n" + "# x\n" * MAX_FRONT_MATTER_BYTES, encoding="utf-8")
    names, problems = discover(harness, user_home)
    assert names == ["huge"]
    assert len(problems) == 1 and "not closed" in problems[0] and "64 kB" in problems[0]


def test_every_folder_is_searched_user_first(harness: SessionHarness, user_home: Path) -> None:
    write_skill(harness.paths.config_dir / "skills", "a-config")
    write_skill(user_home / ".agents" / "skills", "b-agents")
    write_skill(user_home / ".claude" / "skills", "c-claude")
    write_skill(harness.cwd / ".picode" / "skills", "d-picode")
    write_skill(harness.cwd / ".agents" / "skills", "e-agents")
    write_skill(harness.cwd / ".claude" / "skills", "f-claude")
    found = discover_skills(harness.cwd, harness.paths.config_dir, user_home)
    assert [(s.name, s.scope) for s in found.skills] == [
        ("a-config", "user"),
        ("b-agents", "user"),
        ("c-claude", "user"),
        ("d-picode", "project"),
        ("e-agents", "project"),
        ("f-claude", "project"),
    ]
    assert found.problems == ()


def test_a_project_skill_linking_outside_the_project_is_refused(
    harness: SessionHarness, user_home: Path, tmp_path: Path
) -> None:
    outside = write_skill(tmp_path / "elsewhere", "linked")
    (harness.cwd / ".git").mkdir()
    skills = harness.cwd / ".agents" / "skills"
    skills.mkdir(parents=True)
    (skills / "linked").symlink_to(outside.parent)
    names, problems = discover(harness, user_home)
    assert names == []
    assert len(problems) == 1 and "outside" in problems[0]


def test_the_invocation_names_the_path_and_the_arguments(
    harness: SessionHarness, user_home: Path
) -> None:
    path = write_skill(harness.cwd / ".agents" / "skills", "deploy")
    found = discover_skills(harness.cwd, harness.paths.config_dir, user_home)
    skill = found.get("deploy")
    assert skill is not None
    text = invocation_text(skill, "  staging  ")
    assert str(path) in text and "deploy" in text and text.endswith("Arguments: staging")
    assert "Arguments" not in invocation_text(skill)


def test_an_untrusted_projects_skills_are_listed_as_context_not_gated(
    harness: SessionHarness, user_home: Path
) -> None:
    from picode.session.safety.trust import assess_project

    write_skill(harness.cwd / ".claude" / "skills", "deploy")
    write_skill(harness.cwd / ".picode" / "skills", "review")
    (harness.cwd / ".picode" / "SYSTEM.md").write_text("gated", encoding="utf-8")
    trust = assess_project(harness.paths, harness.cwd)
    assert not trust.trusted and trust.needs_answer
    assert [(item.source, item.description) for item in trust.context] == [
        (".picode/skills", "adds 1 skill(s) the model may read and follow: review"),
        (".claude/skills", "adds 1 skill(s) the model may read and follow: deploy"),
    ]
    assert all("skill" not in item.source for item in trust.items)


def test_skills_alone_need_no_trust(harness: SessionHarness, user_home: Path) -> None:
    from picode.session.safety.trust import assess_project

    write_skill(harness.cwd / ".agents" / "skills", "deploy")
    trust = assess_project(harness.paths, harness.cwd)
    assert not trust.needs_answer and not trust.items
    assert trust.context == []  # no question to show: not even listed
