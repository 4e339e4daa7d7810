"""Pickers opened from the real app: model, thinking, theme, resume, fork, and ``picode -r``."""

from __future__ import annotations

from typing import Any

import pytest

from picode.ai.providers.faux import FauxText, FauxTurn, text_turn
from picode.ai.types import UserMessage
from picode.tui.app import PicodeApp
from picode.tui.config import TuiConfig
from picode.tui.pickers import ForkPicker, ModelPicker, SessionPicker, ThemePicker, ThinkingPicker
from picode.tui.pickers.base import PickerScreen
from picode.tui.widgets.info import InfoView
from picode.tui.widgets.messages import UserMessageView
from tests.tui.conftest import (
    SIZE,
    TuiHarness,
    has_notice,
    opened,
    run,
    screen_of,
    send,
    type_text,
    wait_until,
)

KEY_VARIABLES = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


def _user_texts(app: PicodeApp) -> list[str]:
    return [view.text for view in app.query(UserMessageView)]


@pytest.mark.usefixtures("no_keys")
def test_model_picker_lists_every_model_marks_missing_keys_and_switches(tui: TuiHarness) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "/model")
            picker: ModelPicker = await screen_of(pilot, ModelPicker)
            refs = [m.ref for m in picker.models]
            assert refs[0] == app.session.model.ref  # the faux model, current, first
            assert "anthropic/claude-haiku-4-5" in picker.missing_key
            assert "openai/gpt-5.4" not in picker.missing_key  # OPENAI_API_KEY is set
            keyed = [r for r in refs if r not in picker.missing_key]
            assert refs[: len(keyed)] == keyed  # models with a key come first
            # The provider too: Bedrock and Vertex list Claude Haiku as well.
            await type_text(pilot, "anthropic/claude-haiku-4-5")
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.session.model.id == "claude-haiku-4-5")
            assert has_notice(app, "No API key for anthropic: set ANTHROPIC_API_KEY")
            assert "claude-haiku-4-5" in app.info_footer.render().plain
            # With an argument, and Ctrl+L opens the same picker.
            await send(pilot, "/model openai/gpt-5.4-mini")
            await wait_until(pilot, lambda: app.session.model.id == "gpt-5.4-mini")
            await pilot.press("ctrl+l")
            picker = await screen_of(pilot, ModelPicker)
            assert picker.highlighted_item is not None
            assert picker.highlighted_item.ref == "openai/gpt-5.4-mini"
            await pilot.press("escape")
            await wait_until(pilot, lambda: not isinstance(app.screen, ModelPicker))
            assert app.session.model.id == "gpt-5.4-mini"

    run(scenario())


def test_unknown_model_argument_is_reported_and_kept(tui: TuiHarness) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            before = app.session.model
            await send(pilot, "/model nosuch/model-x")
            await wait_until(pilot, lambda: has_notice(app, "nosuch"))
            assert app.editor.text == ""  # not left there for the next command
            await pilot.press("up")  # the history has it, to fix
            assert app.editor.text.strip() == "/model nosuch/model-x".strip()
            assert app.session.model is before

    run(scenario())


def test_thinking_takes_a_level_or_offers_a_picker(tui: TuiHarness) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "/thinking high")
            await wait_until(pilot, lambda: app.session.thinking == "high")
            await send(pilot, "/thinking loud")
            await wait_until(pilot, lambda: has_notice(app, "Unknown thinking level 'loud'"))
            assert app.editor.text == ""  # not left there for the next command
            await pilot.press("up")  # the history has it, to fix
            assert app.editor.text.strip() == "/thinking loud".strip()
            await pilot.press("ctrl+c")
            await send(pilot, "/thinking")
            picker: ThinkingPicker = await screen_of(pilot, ThinkingPicker)
            assert picker.highlighted_item == "high"
            await type_text(pilot, "min")
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.session.thinking == "minimal")
            assert "minimal" in app.info_footer.render().plain

    run(scenario())


def test_thinking_on_a_model_that_does_not_think_says_so(tui: TuiHarness) -> None:
    app = tui.app(tui.faux(reasoning=False))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "/thinking high")
            await wait_until(pilot, lambda: has_notice(app, "does not think"))
            assert app.session.thinking == "off"

    run(scenario())


def test_thinking_says_what_a_model_that_always_thinks_is_sent_for_off(tui: TuiHarness) -> None:
    from dataclasses import replace

    from picode.ai.thinking import LOWEST, ThinkingControl

    faux = tui.faux()
    faux.model = replace(
        faux.model, thinking=ThinkingControl("adaptive", ("low", "high"), off=False)
    )
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "/thinking high")
            await wait_until(pilot, lambda: app.session.thinking == "high")
            await send(pilot, "/thinking off")
            shown = f"low ({LOWEST})"
            await wait_until(pilot, lambda: has_notice(app, f"Thinking level: {shown}"))
            assert app.session.thinking == "off"  # the setting is kept; what is sent is said
            assert app.info_footer.info.thinking == shown
            await send(pilot, "/session")  # says it as the footer does
            await wait_until(pilot, lambda: bool(app.query(InfoView)))
            assert f"· thinking {shown}" in app.query(InfoView).last().plain
            await send(pilot, "/thinking medium")  # not one of its levels: the nearest, upward
            await wait_until(pilot, lambda: app.info_footer.info.thinking.startswith("high ("))

    run(scenario())


def test_theme_previews_live_esc_restores_and_enter_keeps(tui: TuiHarness) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            assert app.theme == "dark"
            await send(pilot, "/theme")
            picker: ThemePicker = await screen_of(pilot, ThemePicker)
            await pilot.press("down")  # dark → light
            await wait_until(pilot, lambda: app.theme == "light", what="live preview")
            await pilot.press("escape")
            await wait_until(pilot, lambda: not isinstance(app.screen, ThemePicker))
            assert app.theme == "dark"
            await send(pilot, "/theme")
            picker = await screen_of(pilot, ThemePicker)
            await type_text(pilot, "ansi")
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.theme == "ansi")
            await wait_until(pilot, lambda: has_notice(app, "Theme: ansi (saved in"))
            await send(pilot, "/theme nosuch")
            await wait_until(pilot, lambda: has_notice(app, "Unknown theme 'nosuch'"))
            assert picker is not None

    config = tui.paths.user_config_file
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('# mine\napproval = "all"\n', encoding="utf-8")
    run(scenario())
    # Kept for the next start, beside what the file held (comments included).
    assert config.read_text(encoding="utf-8") == '# mine\napproval = "all"\ntheme = "ansi"\n'


def test_app_keys_do_not_fire_inside_a_picker(tui: TuiHarness) -> None:
    faux = tui.faux(FauxTurn([FauxText("working ")], hang=True))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "go on for a while")
            await wait_until(pilot, lambda: app.status.is_working)
            thinking, model = app.session.thinking, app.session.model
            await send(pilot, "/model")
            picker = await screen_of(pilot, ModelPicker)
            await pilot.press("shift+tab", "ctrl+p", "ctrl+t", "ctrl+o")
            assert app.session.thinking == thinking and app.session.model is model
            assert not app.transcript.thinking_collapsed and not app.transcript.tools_expanded
            await pilot.press("escape")  # closes the picker, does not interrupt
            await wait_until(pilot, lambda: not isinstance(app.screen, ModelPicker))
            assert app.session.is_running
            assert picker.filter_input.value == ""
            await pilot.press("escape")
            await wait_until(pilot, lambda: not app.session.is_running, what="abort")

    run(scenario())


async def _two_sessions(pilot: Any) -> tuple[str, str]:
    """A finished session about apples, then a current one about pears; their ids."""
    app = pilot.app
    await send(pilot, "tell me about apples")
    await wait_until(pilot, lambda: len(app.session.messages) == 2 and not app.session.is_running)
    first = app.session.session_id
    await send(pilot, "/new")
    await wait_until(pilot, lambda: app.session.session_id != first)
    await send(pilot, "and pears")
    await wait_until(pilot, lambda: len(app.session.messages) == 2 and not app.session.is_running)
    return first, app.session.session_id


def test_resume_picker_lists_this_folder_tab_lists_all_and_enter_switches(
    tui: TuiHarness,
) -> None:
    other = tui.root / "elsewhere"
    other.mkdir()
    app = tui.app(tui.faux(text_turn("Apples are red."), text_turn("Pears are green.")))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            # A session recorded in another folder: listed only with Tab.
            store = app.session.store
            elsewhere = store.create(other)
            elsewhere.append_message(UserMessage("far away"))
            elsewhere.close()
            apples, pears = await _two_sessions(pilot)
            await send(pilot, "/resume")
            picker: SessionPicker = await screen_of(pilot, SessionPicker)
            await wait_until(pilot, lambda: not picker.is_loading)
            assert [s.id for s in picker.matches] == [pears, apples]
            await pilot.press("tab")
            await wait_until(pilot, lambda: not picker.is_loading and len(picker.matches) == 3)
            await pilot.press("tab")
            await type_text(pilot, "apples")
            await wait_until(pilot, lambda: [s.id for s in picker.matches] == [apples])
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.session.session_id == apples)
            await wait_until(pilot, lambda: "tell me about apples" in _user_texts(app))
            assert "and pears" not in _user_texts(app)
            assert has_notice(app, "Resumed session")
            assert app.session.messages[-1].text == "Apples are red."  # type: ignore[union-attr]

    run(scenario())


def test_fork_starts_a_new_session_before_the_message_and_puts_it_in_the_editor(
    tui: TuiHarness,
) -> None:
    app = tui.app(tui.faux(text_turn("One."), text_turn("Two.")))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "/fork")
            await wait_until(pilot, lambda: has_notice(app, "Nothing to fork from yet"))
            await pilot.press("ctrl+c")
            for text in ("first question", "second question"):
                count = len(app.session.messages)
                await send(pilot, text)
                await wait_until(
                    pilot,
                    lambda c=count: (
                        len(app.session.messages) == c + 2 and not app.session.is_running
                    ),
                )
            original = app.session.session_id
            app.session.set_thinking_level("high")  # after the fork point: the fork keeps it
            await send(pilot, "/fork")
            picker: ForkPicker = await screen_of(pilot, ForkPicker)
            assert [text for _, text in picker.matches] == ["second question", "first question"]
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.session.session_id != original)
            await wait_until(pilot, lambda: app.editor.text == "second question")
            assert [m.text for m in app.session.messages] == ["first question", "One."]
            assert has_notice(app, f"Forked to new session {app.session.session_id}")
            assert app.session.thinking == "high"
            assert app.info_footer.info.thinking == "high"
            await wait_until(
                pilot,
                lambda: _user_texts(app) == ["first question"],
                what=f"{_user_texts(app)} {[type(e).__name__ for e in app.transcript.entries]}",
            )

    run(scenario())


@pytest.fixture
def picode_home(tui: TuiHarness, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before any session is open, the picker finds the sessions folder as the CLI does.
    monkeypatch.setenv("PICODE_HOME", str(tui.root / "home"))


def _picking_app(tui: TuiHarness, faux: Any) -> PicodeApp:
    """``picode -r`` without an id, as the CLI configures it."""
    config = TuiConfig.from_options(tui.options(faux, session="pick"))
    assert config.pick_session
    config.cwd_label, config.branch, config.clock = "~/project", "main", tui.clock
    config.warm_provider, config.version = False, "0.0.0"
    return PicodeApp(config)


@pytest.mark.usefixtures("picode_home")
def test_resume_without_an_id_shows_the_picker_before_opening(tui: TuiHarness) -> None:
    from picode.session.store.sessions import SessionStore

    store = SessionStore(tui.paths.sessions_dir)
    earlier = store.create(tui.cwd)
    earlier.append_message(UserMessage("what was I doing?"))
    earlier.close()
    app = _picking_app(tui, tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            picker: SessionPicker = await screen_of(pilot, SessionPicker)
            assert app.session is None
            await wait_until(pilot, lambda: not picker.is_loading)
            assert [s.id for s in picker.matches] == [earlier.id]
            await pilot.press("enter")
            await opened(pilot)
            assert app.session.session_id == earlier.id
            await wait_until(pilot, lambda: _user_texts(app) == ["what was I doing?"])

    run(scenario())


@pytest.mark.usefixtures("picode_home")
def test_resume_picker_at_start_cancelled_opens_a_new_session(tui: TuiHarness) -> None:
    app = _picking_app(tui, tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await screen_of(pilot, SessionPicker)
            await pilot.press("escape")
            await opened(pilot)
            assert app.session.messages == [] and app.session.session_id is None
            assert has_notice(app, "No session chosen")

    run(scenario())


@pytest.mark.usefixtures("picode_home")
def test_a_session_that_cannot_be_resumed_at_start_is_reported_and_a_new_one_opens(
    tui: TuiHarness,
) -> None:
    from picode.session.store.sessions import SessionStore

    store = SessionStore(tui.paths.sessions_dir)
    doomed = store.create(tui.cwd)
    doomed.append_message(UserMessage("soon gone"))
    doomed.close()
    app = _picking_app(tui, tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            picker: SessionPicker = await screen_of(pilot, SessionPicker)
            await wait_until(pilot, lambda: not picker.is_loading and picker.matches)
            doomed.path.unlink()
            await pilot.press("enter")
            await opened(pilot)
            assert has_notice(app, f"Could not resume {doomed.path}")
            assert app.session.messages == []

    run(scenario())


@pytest.mark.usefixtures("no_keys")
@pytest.mark.parametrize("command", ["/model", "/theme", "/thinking", "/resume"])
def test_on_a_short_terminal_a_picker_keeps_its_key_hints_and_scrolls(
    tui: TuiHarness, command: str
) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=(80, 15)) as pilot:
            await opened(pilot)
            await send(pilot, command)
            picker = await screen_of(pilot, PickerScreen)
            await pilot.pause()
            box = picker.query_one("#picker").region
            for part in (picker.title_label, picker.filter_input, picker.hint_label):
                region = part.region
                assert region.height >= 1, part
                assert box.y < region.y and region.bottom < box.bottom, part  # inside the border
            assert box.y >= 0 and box.bottom <= 15
            if command == "/model":  # more models than rows: the list scrolls
                assert picker.pick_list.region.height >= 2
                assert picker.pick_list.count > picker.pick_list.region.height

    run(scenario())
