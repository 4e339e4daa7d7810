"""``/login`` and ``/logout``: a key typed into a masked box, kept in the auth file, never on
screen, in the editor's history or in a notice."""

from __future__ import annotations

import json

import pytest

from picode.tui.pickers.key_prompt import KeyPrompt
from tests.tui.conftest import (
    TuiHarness,
    has_notice,
    notices,
    opened,
    run,
    screen_of,
    send,
    type_text,
    wait_until,
)
from tests.tui.hosts import screen_text

KEY = "sk-ant-typed-0123456789"
SIZE = (100, 30)


@pytest.fixture
def no_anthropic_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


@pytest.mark.usefixtures("no_anthropic_key")
def test_login_keeps_a_key_it_never_shows_and_the_provider_then_has_one(
    tui: TuiHarness,
) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            session = (await opened(pilot)).session
            assert session is not None
            haiku = next(m for m in session.known_models() if m.provider == "anthropic")
            assert not session.has_key(haiku)
            await send(pilot, "/login anthropic")
            await screen_of(pilot, KeyPrompt)
            assert "API key for anthropic" in screen_text(app)
            await type_text(pilot, KEY)
            shown = screen_text(app)
            assert KEY[:6] not in shown and "•" * len(KEY) in shown
            await pilot.press("enter")
            await wait_until(pilot, lambda: has_notice(app, "Saved the key for anthropic"))
            assert session.has_key(haiku)
            saved = json.loads(session.api_key_file.read_text(encoding="utf-8"))
            assert saved == {"anthropic": {"api_key": KEY}}
            assert not any(KEY[:6] in text for text in notices(app))
            await pilot.press("up")  # the history has the command, not the key
            assert app.editor.text == "/login anthropic"

    run(scenario())


@pytest.mark.usefixtures("no_anthropic_key")
def test_esc_saves_nothing_and_a_bad_provider_opens_no_prompt(tui: TuiHarness) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            session = (await opened(pilot)).session
            assert session is not None
            await send(pilot, "/login anthropic")
            await screen_of(pilot, KeyPrompt)
            await type_text(pilot, "half-typed")
            await pilot.press("escape")
            await wait_until(pilot, lambda: has_notice(app, "No key saved for anthropic."))
            assert not session.api_key_file.exists()
            await send(pilot, "/login anthropc")
            await wait_until(pilot, lambda: has_notice(app, "Did you mean anthropic"))
            assert not isinstance(app.screen, KeyPrompt)

    run(scenario())


def test_logout_removes_the_saved_key_and_names_one_that_remains(
    tui: TuiHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            session = (await opened(pilot)).session
            assert session is not None
            saved = session.save_api_key("openai", "sk-saved-0123456789")
            assert saved.used_instead == "OPENAI_API_KEY"
            await send(pilot, "/logout openai")
            await wait_until(pilot, lambda: has_notice(app, "Removed the key for openai"))
            assert has_notice(app, "openai still has a key: OPENAI_API_KEY.")
            assert json.loads(session.api_key_file.read_text(encoding="utf-8")) == {}

    run(scenario())


@pytest.mark.usefixtures("no_anthropic_key")
def test_a_message_sent_without_a_key_asks_for_one_then_goes(tui: TuiHarness) -> None:
    from dataclasses import replace

    from picode.ai.providers.faux import text_turn

    faux = tui.faux(text_turn("Hello with a key."))
    faux.model = replace(faux.model, provider="anthropic")  # a provider that takes a key
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            session = (await opened(pilot)).session
            assert session is not None
            await send(pilot, "first question")
            prompt = await screen_of(pilot, KeyPrompt)
            assert "Your message needs a key for anthropic" in screen_text(app)
            await pilot.press("escape")  # not now: the message waits in the editor
            await wait_until(pilot, lambda: app.editor.text == "first question")
            assert not session.messages and has_notice(app, "No API key for anthropic")
            await pilot.press("enter")
            prompt = await screen_of(pilot, KeyPrompt)
            prompt.key_input.value = KEY  # as pasted
            await pilot.press("enter")
            await wait_until(pilot, lambda: len(session.messages) == 2, what="the reply")
            assert session.messages[-1].text == "Hello with a key."
            assert app.editor.text == ""
            assert faux.requests[0].options.api_key == KEY

    run(scenario())
