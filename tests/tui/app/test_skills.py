"""Skills in the TUI: ``/skill:name`` (completed with its description) makes the model see
the skill's SKILL.md path; ``/skills`` lists them and where they come from."""

from __future__ import annotations

from pathlib import Path

import pytest

from picode.ai.providers.faux import text_turn
from picode.tui.widgets.info import InfoView
from tests.tui.conftest import (
    SIZE,
    TuiHarness,
    has_notice,
    hold_open,
    opened,
    run,
    send,
    start_turn,
    type_text,
    wait_until,
)


@pytest.fixture
def user_home(tui: TuiHarness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME of the test's own, to put user skills in (set after the tui fixture's)."""
    folder = tmp_path / "user"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


def write_skill(folder: Path, name: str, description: str) -> Path:
    path = folder / name / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(
        f"---\nname: {name}\ndescription: {description}\n---\nTHE-BODY", encoding="utf-8"
    )
    return path


def _info(app: object, title: str) -> InfoView | None:
    views = [v for v in app.query(InfoView) if v.title_text == title]  # type: ignore[attr-defined]
    return views[-1] if views else None


def test_skill_command_sends_the_skill_md_path_and_arguments(tui: TuiHarness) -> None:
    path = write_skill(tui.cwd / ".claude" / "skills", "deploy", "Ship it to an environment.")
    faux = tui.faux(text_turn("Deploying."))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            popup = app.completion_popup
            await type_text(pilot, "/skill:")
            await wait_until(pilot, lambda: popup.is_open)
            await wait_until(pilot, lambda: [i.value for i in popup.items] == ["/skill:deploy"])
            assert popup.items[0].detail == "Ship it to an environment."
            app.editor.clear()
            await send(pilot, "/skill:deploy staging now")
            await wait_until(pilot, lambda: bool(faux.requests), what="the request")

    run(scenario())
    sent = faux.last_request.messages[-1].text
    assert str(path) in sent and "Arguments: staging now" in sent
    assert "THE-BODY" not in sent


def test_skills_lists_each_skill_and_where_it_was_found(tui: TuiHarness, user_home: Path) -> None:
    mine = write_skill(user_home / ".agents" / "skills", "notes", "Keep notes.")
    theirs = write_skill(tui.cwd / ".picode" / "skills", "review", "Review a diff.")
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "/skills")
            await wait_until(pilot, lambda: _info(app, "Skills (2)") is not None)
            text = _info(app, "Skills (2)").plain  # type: ignore[union-attr]
            assert "notes" in text and "Keep notes." in text and f"user · {mine}" in text
            assert "review" in text and f"project · {theirs}" in text

    run(scenario())


def test_skills_with_none_says_where_to_put_them(tui: TuiHarness) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "/skills")
            await wait_until(pilot, lambda: has_notice(app, "No skills were found"))

    run(scenario())


def test_the_trust_question_shows_skills_as_context(tui: TuiHarness) -> None:
    from textual.app import App
    from textual.widgets import Static

    from picode.session.safety.trust import assess_project
    from picode.tui.trust_prompt import TrustScreen

    write_skill(tui.cwd / ".claude" / "skills", "deploy", "Ship it.")
    (tui.cwd / ".picode").mkdir()
    (tui.cwd / ".picode" / "SYSTEM.md").write_text("gated", encoding="utf-8")
    trust = assess_project(tui.paths, tui.cwd)
    app: App[None] = App()

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            app.push_screen(TrustScreen(trust))
            await wait_until(pilot, lambda: bool(app.screen.query("#trust-context")))
            shown = str(app.screen.query_one("#trust-context", Static).render())
            assert "It also adds context, used trusted or not:" in shown
            assert ".claude/skills: adds 1 skill(s) the model may read and follow: deploy" in shown
            items = str(app.screen.query_one("#trust-items", Static).render())
            assert "skill" not in items and "SYSTEM.md" in items

    run(scenario())


def test_a_skill_typed_before_the_session_opens_waits_for_it(tui: TuiHarness) -> None:
    path = write_skill(tui.cwd / ".agents" / "skills", "deploy", "Ship it.")
    faux = tui.faux(text_turn("ok"))
    app = tui.app(faux)
    gate = hold_open(app)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert app.session is None
            await send(pilot, "/skill:deploy prod")
            assert not has_notice(app, "Unknown command")
            gate.set()
            await wait_until(pilot, lambda: bool(faux.requests), what="sent once open")
            sent = faux.requests[0].messages[-1].text
            assert str(path) in sent and "Arguments: prod" in sent

    run(scenario())


def test_a_skill_sent_while_picode_works_waits_as_a_follow_up(tui: TuiHarness) -> None:
    from picode.ai.providers.faux import FauxText, FauxTurn

    path = write_skill(tui.cwd / ".agents" / "skills", "deploy", "Ship it.")
    faux = tui.faux(FauxTurn([FauxText("working ")], hang=True))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            session = await start_turn(pilot, "go")
            await send(pilot, "/skill:deploy")
            await wait_until(pilot, lambda: bool(session.queued_follow_ups))
            assert str(path) in session.queued_follow_ups[0]
            session.abort()
            await wait_until(pilot, lambda: not session.is_running)

    run(scenario())


def test_help_lists_the_skills_and_where_to_put_them(tui: TuiHarness) -> None:
    write_skill(tui.cwd / ".agents" / "skills", "deploy", "Ship it.")
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "/help")
            await wait_until(pilot, lambda: _info(app, "Commands") is not None)
            commands = _info(app, "Commands").plain  # type: ignore[union-attr]
            assert "/skill:deploy [args]" in commands and "Ship it." in commands
            places = _info(app, "Where picode keeps its files").plain  # type: ignore[union-attr]
            assert str(tui.paths.config_dir / "skills") in places

    run(scenario())
