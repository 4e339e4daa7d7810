"""Prompt templates, /help, /clear and /exit through the real app."""

from __future__ import annotations

from pathlib import Path

from picode.ai.providers.faux import text_turn
from picode.tui.widgets.info import InfoView
from picode.tui.widgets.notice import WelcomeView
from tests.tui.conftest import SIZE, TuiHarness, hold_open, notices, opened, run, send, wait_until

REVIEW = """---
description: Review a file for one concern
argument-hint: <file> <concern>
---
Review $1 for $2. Everything typed: $ARGUMENTS"""


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _info(app: object, title: str) -> InfoView | None:
    views = [v for v in app.query(InfoView) if v.title_text == title]  # type: ignore[attr-defined]
    return views[-1] if views else None


def test_a_template_completes_with_its_hint_and_sends_its_body_filled_in(
    tui: TuiHarness,
) -> None:
    _write(tui.cwd / ".picode" / "prompts" / "review.md", REVIEW)
    faux = tui.faux(text_turn("Reviewed."))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await pilot.press("/", "r", "e", "v")
            popup = app.completion_popup
            await wait_until(pilot, lambda: popup.is_open)
            assert [(i.label, i.detail) for i in popup.items] == [
                ("/review <file> <concern>", "Review a file for one concern")
            ]
            await pilot.press("tab", *"src/a.py naming", "enter")
            await wait_until(pilot, lambda: bool(faux.requests) and not app.session.is_running)
            sent = faux.last_request.messages[-1].text
            assert sent == "Review src/a.py for naming. Everything typed: src/a.py naming"

    run(scenario())


def test_a_claude_code_command_is_found_and_a_built_in_name_is_refused_once(
    tui: TuiHarness,
) -> None:
    _write(tui.cwd / ".claude" / "commands" / "x.md", "Do the x thing.")
    _write(tui.paths.config_dir / "prompts" / "new.md", "would shadow /new")
    faux = tui.faux(text_turn("Done."))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await wait_until(pilot, lambda: any("new.md" in n for n in notices(app)))
            await send(pilot, "/x")
            await wait_until(pilot, lambda: bool(faux.requests) and not app.session.is_running)
            assert faux.last_request.messages[-1].text == "Do the x thing."
            await send(pilot, "/help")  # the list is built again: still one warning
            await wait_until(pilot, lambda: _info(app, "Commands") is not None)
            assert sum("new.md" in n for n in notices(app)) == 1
            assert app.commands.current().get("new").source == "builtin"  # type: ignore[union-attr]

    run(scenario())


def test_help_lists_the_commands_templates_keys_and_where_files_live(tui: TuiHarness) -> None:
    _write(tui.cwd / ".picode" / "prompts" / "review.md", REVIEW)
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "/help")
            await wait_until(pilot, lambda: _info(app, "Where picode keeps its files") is not None)
            commands = _info(app, "Commands").plain  # type: ignore[union-attr]
            for usage in ("/review <file> <concern>", "/init", "/clear", "/exit", "/model"):
                assert usage in commands
            assert "Review a file for one concern" in commands
            keys = _info(app, "Keys").plain  # type: ignore[union-attr]
            assert "cycle_model" in keys
            places = _info(app, "Where picode keeps its files").plain  # type: ignore[union-attr]
            assert str(tui.paths.config_dir / "config.toml") in places
            assert str(tui.paths.config_dir / "prompts") in places

    run(scenario())


def test_clear_starts_a_new_session_and_exit_quits(tui: TuiHarness) -> None:
    app = tui.app(tui.faux(text_turn("old reply")))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "hello")
            await wait_until(pilot, lambda: len(app.session.messages) == 2)
            first_id = app.session.session_id
            await send(pilot, "/clear")
            await wait_until(pilot, lambda: app.session.session_id != first_id)
            await wait_until(pilot, lambda: len(app.transcript.entries) == 1)
            assert isinstance(app.transcript.entries[0], WelcomeView)
            assert app.session.messages == []
            await send(pilot, "/exit")
            await wait_until(pilot, lambda: not app.is_running, what="app exit")
        assert app.return_code == 0

    run(scenario())


def test_a_template_typed_while_the_session_opens_completes_once_it_is_open(
    tui: TuiHarness,
) -> None:
    _write(tui.cwd / ".picode" / "prompts" / "review.md", REVIEW)
    faux = tui.faux(text_turn("Reviewed."))
    app = tui.app(faux)
    gate = hold_open(app)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("/", "r", "e", "v")
            popup = app.completion_popup
            gate.set()
            await opened(pilot)
            await wait_until(pilot, lambda: popup.is_open, what="the template in the list")
            assert [i.label for i in popup.items] == ["/review <file> <concern>"]

    run(scenario())


def test_a_template_sent_while_the_session_opens_waits_and_is_expanded(tui: TuiHarness) -> None:
    _write(tui.cwd / ".picode" / "prompts" / "review.md", REVIEW)
    faux = tui.faux(text_turn("Reviewed."))
    app = tui.app(faux)
    gate = hold_open(app)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "/review a.py b")
            await wait_until(pilot, lambda: "command will run" in (app.status.notice or ("",))[0])
            gate.set()
            await opened(pilot)
            await wait_until(pilot, lambda: bool(faux.requests) and not app.session.is_running)
            assert faux.last_request.messages[-1].text.startswith("Review a.py for b.")
            assert not any("Unknown command" in n for n in notices(app))

    run(scenario())


def test_every_built_in_command_is_a_name_templates_may_not_take() -> None:
    from picode.session.prompts import RESERVED_NAMES
    from picode.tui.completion.commands import BUILTIN_COMMANDS

    assert {command.name for command in BUILTIN_COMMANDS} <= RESERVED_NAMES
