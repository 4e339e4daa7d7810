"""Prompt templates: found in their folders, expanded, and sent by ``AgentSession.prompt``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from picode.ai.models import Model
from picode.ai.providers.faux import text_turn
from picode.ai.stream import stream_simple
from picode.session.events import Notice
from picode.session.paths import resolve_paths
from picode.session.prompts import expand, load_templates
from picode.session.safety.trust import assess_project
from tests.session.conftest import SessionHarness, run


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_each_folder_is_read_and_a_subfolder_labels_a_command_as_in_claude_code(
    tmp_path: Path,
) -> None:
    config, project = tmp_path / "config", tmp_path / "project"
    write(config / "prompts" / "mine.md", "my own\n")
    write(project / ".claude" / "commands" / "x.md", "from claude code\n")
    write(project / ".claude" / "commands" / "git" / "log.md", "show the log\n")
    write(project / ".picode" / "prompts" / "review.md", "---\ndescription: Review\n---\nbody")

    loaded = load_templates(config, project)

    assert loaded.warnings == []
    assert {"mine", "x", "log", "review", "init"} == set(loaded.templates)
    assert loaded.templates["log"].description == "show the log (git)"
    assert loaded.templates["mine"].source == "user"
    assert loaded.templates["x"].source == "project"
    assert loaded.templates["x"].description == "from claude code"
    assert loaded.templates["review"].description == "Review"


def test_two_files_of_one_name_in_a_folder_keep_the_first_and_warn(tmp_path: Path) -> None:
    write(tmp_path / "prompts" / "a" / "log.md", "first")
    write(tmp_path / "prompts" / "b" / "log.md", "second")

    loaded = load_templates(tmp_path, tmp_path / "none")

    assert loaded.templates["log"].body == "first"
    assert len(loaded.warnings) == 1 and "b/log.md" in loaded.warnings[0]


def test_a_project_template_replaces_the_persons_of_the_same_name(tmp_path: Path) -> None:
    config, project = tmp_path / "config", tmp_path / "project"
    write(config / "prompts" / "review.md", "mine")
    write(project / ".picode" / "prompts" / "review.md", "the project's")

    assert load_templates(config, project).templates["review"].body == "the project's"


def test_placeholders_take_the_arguments_and_their_words(tmp_path: Path) -> None:
    body = "---\nargument-hint: <file> <focus>\n---\nReview $1 for $2. All: $ARGUMENTS. $3."
    write(tmp_path / "prompts" / "review.md", body)
    template = load_templates(tmp_path, tmp_path / "none").templates["review"]

    assert template.argument_hint == "<file> <focus>"
    assert expand(template, 'src/a.py "error handling"') == (
        'Review src/a.py for error handling. All: src/a.py "error handling". .'
    )


def test_arguments_of_a_body_without_placeholders_are_appended(tmp_path: Path) -> None:
    write(tmp_path / "prompts" / "fix.md", "Fix the failing test.")
    template = load_templates(tmp_path, tmp_path / "none").templates["fix"]

    assert expand(template, "tests/test_x.py") == "Fix the failing test.\n\ntests/test_x.py"
    assert expand(template, "") == "Fix the failing test."


def test_bad_files_and_built_in_names_are_left_out_with_one_warning_each(tmp_path: Path) -> None:
    folder = tmp_path / "prompts"
    write(folder / "broken.md", "---\ndescription: never closed\n")
    write(folder / "empty.md", "---\ndescription: nothing\n---\n")
    write(folder / "model.md", "would shadow /model")
    write(folder / "bad name.md", "spaces")
    (folder / "binary.md").write_bytes(b"\xff\xfe\x00bad")
    write(folder / "good.md", "fine")

    loaded = load_templates(tmp_path, tmp_path / "none")

    assert set(loaded.templates) == {"good", "init"}
    assert len(loaded.warnings) == 5
    for name in ("broken.md", "empty.md", "model.md", "bad name.md", "binary.md"):
        assert sum(name in warning for warning in loaded.warnings) == 1, name
    assert any("/model is a built-in command" in warning for warning in loaded.warnings)


def test_the_session_sends_the_expanded_body_and_warns_about_bad_files(
    harness: SessionHarness,
) -> None:
    write(harness.cwd / ".picode" / "prompts" / "review.md", "Review $1, then $ARGUMENTS.")
    write(harness.paths.config_dir / "prompts" / "broken.md", "---\nx: [\n---\nbody")

    async def body() -> None:
        faux = harness.faux(text_turn("ok"))
        session = await harness.open(faux)  # an untrusted folder: templates still load
        await session.prompt("/review src/a.py carefully")
        sent = faux.last_request.messages[-1].text
        assert sent == "Review src/a.py, then src/a.py carefully."
        assert "review" in [t.name for t in session.prompt_templates]
        await session.close()

    run(body())
    warnings = [n.text for n in harness.of_type(Notice) if n.level == "warning"]
    assert sum("broken.md" in text for text in warnings) == 1


def test_init_asks_the_model_to_write_agents_md(harness: SessionHarness) -> None:
    async def body() -> None:
        faux = harness.faux(text_turn("ok"))
        session = await harness.open(faux)
        await session.prompt("/init keep it short")
        sent = faux.last_request.messages[-1].text
        assert "AGENTS.md" in sent and "test" in sent and sent.endswith("keep it short")
        await session.close()

    run(body())


def test_text_that_names_no_template_is_sent_as_typed(harness: SessionHarness) -> None:
    async def body() -> None:
        faux = harness.faux(text_turn("ok"))
        session = await harness.open(faux)
        await session.prompt("/usr/bin is where it lives")
        assert faux.last_request.messages[-1].text == "/usr/bin is where it lives"
        await session.close()

    run(body())


def test_a_templates_model_is_used_for_that_message_only(
    harness: SessionHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    write(
        harness.cwd / ".picode" / "prompts" / "ask.md",
        "---\nmodel: openai/gpt-5.4-mini:high\n---\nQ",
    )
    asked: list[str] = []

    async def body() -> None:
        faux = harness.faux(text_turn("one"), text_turn("two"))

        def stream(model: Model, context: Any, options: Any) -> Any:
            asked.append(model.ref)  # then answered by the faux provider, whatever the model
            return stream_simple(faux.model, context, options)

        session = await harness.open(faux, stream_fn=stream)
        await session.prompt("/ask")
        await session.prompt("and then")
        assert session.model.ref == faux.model.ref
        assert session.thinking == "off"
        await session.close()

    run(body())
    assert asked == ["openai/gpt-5.4-mini", "faux/faux-1"]


def test_a_template_whose_model_cannot_be_used_warns_and_goes_to_the_current_one(
    harness: SessionHarness,
) -> None:
    write(harness.cwd / ".picode" / "prompts" / "ask.md", "---\nmodel: nobody/nothing\n---\nQ")

    async def body() -> None:
        faux = harness.faux(text_turn("ok"))
        session = await harness.open(faux)
        await session.prompt("/ask")
        assert faux.last_request.messages[-1].text == "Q"
        await session.close()

    run(body())
    warnings = [n.text for n in harness.of_type(Notice) if n.level == "warning"]
    assert any("nobody/nothing" in text for text in warnings)


def test_project_templates_need_no_trust_and_are_listed_as_context(tmp_path: Path) -> None:
    paths = resolve_paths({"PICODE_HOME": str(tmp_path / "home")})
    project = tmp_path / "project"
    write(project / ".picode" / "SYSTEM.md", "gated: asks the question")
    before = assess_project(paths, project)
    write(project / ".picode" / "prompts" / "review.md", "Review $1.")
    write(project / ".claude" / "commands" / "git" / "log.md", "Show the log.")

    trust = assess_project(paths, project)

    assert [item.source for item in trust.items] == [".picode/SYSTEM.md"]
    assert trust.fingerprint == before.fingerprint  # adding a template asks nothing again
    context = {item.source: item.description for item in trust.context}
    assert context == {
        ".claude/commands": "adds prompt templates you may send: /log",
        ".picode/prompts": "adds prompt templates you may send: /review",
    }
