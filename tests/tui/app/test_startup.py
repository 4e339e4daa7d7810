"""Start-up: the first frame needs no session and no SDK; the SDK is warmed afterwards."""

from __future__ import annotations

import gc
import subprocess
import sys
from typing import Any

import pytest
from textual import events

from picode.ai.providers.faux import text_turn
from picode.ai.types import UserMessage
from picode.tui.app import PicodeApp
from picode.tui.widgets.editor_placeholder import EditorPlaceholder
from picode.tui.widgets.messages import UserMessageView
from picode.tui.widgets.notice import NoticeView, WelcomeView
from tests.tui.conftest import SIZE, TuiHarness, hold_open, run, type_text, wait_until

FAKE_SDK = "tests.fake_modules.sdk"
SLOW_SDK = "tests.fake_modules.slow_provider"


def serve_api_with(monkeypatch: pytest.MonkeyPatch, api: str, module: str) -> None:
    """Name ``module`` as the provider module of ``api``, not imported yet."""
    from picode.ai import stream

    monkeypatch.delitem(sys.modules, module, raising=False)
    monkeypatch.setitem(stream.PROVIDER_MODULES, api, module)


def test_importing_the_app_loads_no_provider_sdk() -> None:
    code = (
        "import sys, picode.tui.app\n"
        "heavy = [m for m in ('anthropic', 'openai', 'google.genai', 'httpx',"
        " 'picode.session.agent_session', 'picode.ai.providers.anthropic_messages',"
        " 'textual.widgets._text_area', 'mcp', 'picode.session.mcp.connection')"
        " if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_first_frame_comes_before_the_session_and_typing_waits_for_it(tui: TuiHarness) -> None:
    faux = tui.faux(text_turn("answer"))
    app = tui.app(faux)
    gate = hold_open(app)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert app.query(WelcomeView)  # drawn while the session is still opening
            assert app.session is None
            await type_text(pilot, "early bird")
            await pilot.press("enter")
            assert "Starting the session" in app.status.render().plain
            gate.set()
            await wait_until(pilot, lambda: app.query(UserMessageView), what="sent once open")
            await wait_until(pilot, lambda: faux.requests)
            last = faux.requests[0].messages[-1]
            assert isinstance(last, UserMessage) and last.text == "early bird"

    run(scenario())


def test_a_session_that_cannot_open_is_reported(tui: TuiHarness) -> None:
    async def failing_open() -> Any:
        raise RuntimeError("session file is locked")

    app = tui.app(tui.faux(), open_session=failing_open)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.query(NoticeView))
            notice = app.query_one(NoticeView)
            assert notice.level == "error" and "session file is locked" in notice.text

    run(scenario())


def test_provider_sdk_is_warmed_after_the_first_frame(
    tui: TuiHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, FAKE_SDK, raising=False)
    faux = tui.faux()
    monkeypatch.setitem(
        __import__("picode.ai.stream", fromlist=["PROVIDER_MODULES"]).PROVIDER_MODULES,
        faux.model.api,
        FAKE_SDK,
    )
    app = tui.app(faux, warm_provider=True)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: FAKE_SDK in sys.modules, what="SDK warmed")

    run(scenario())


def test_switching_to_another_provider_prepares_it_at_once(
    tui: TuiHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve_api_with(monkeypatch, "openai-responses", FAKE_SDK)
    app = tui.app(tui.faux(), warm_provider=True)

    def prepared() -> list[str]:
        module = sys.modules.get(FAKE_SDK)  # imported afresh by the warm-up
        return list(module.PREPARED) if module is not None else []

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None, what="the session")
            await pilot.pause()
            assert FAKE_SDK not in sys.modules  # the faux model needs no SDK
            await type_text(pilot, "/model openai/gpt-5.4")
            await pilot.press("enter")
            await wait_until(pilot, lambda: "openai/gpt-5.4" in prepared(), what="prepared")
            assert app.session is not None and app.session.model.ref == "openai/gpt-5.4"

    run(scenario())


def test_a_message_sent_before_the_provider_is_loaded_says_so_until_it_is(
    tui: TuiHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.fake_modules import SLOW_IMPORT_GATE

    faux = tui.faux(text_turn("answer"))
    serve_api_with(monkeypatch, faux.model.api, SLOW_SDK)
    SLOW_IMPORT_GATE.clear()
    app = tui.app(faux, warm_provider=True)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None, what="the session")
            await type_text(pilot, "hello")
            await pilot.press("enter")
            await wait_until(pilot, lambda: faux.requests, what="the message sent")
            assert "Loading the" in app.status.render().plain
            SLOW_IMPORT_GATE.set()
            await wait_until(
                pilot, lambda: "Loading the" not in app.status.render().plain, what="cleared"
            )

    try:
        run(scenario())
    finally:
        SLOW_IMPORT_GATE.set()  # never leave the import thread waiting


def test_warnings_and_an_initial_prompt_from_the_command_line(tui: TuiHarness) -> None:
    faux = tui.faux(text_turn("hi"))
    app = tui.app(faux, warnings=["config.toml:3: unknown key"], initial_prompt="start here")

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: faux.requests, what="initial prompt sent")
            notice = app.query_one(NoticeView)
            assert notice.level == "warning" and "unknown key" in notice.text
            last = faux.requests[0].messages[-1]
            assert isinstance(last, UserMessage) and last.text == "start here"

    run(scenario())


def test_long_lived_objects_are_frozen_once_the_session_is_open(tui: TuiHarness) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        gc.unfreeze()
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None, what="the session")
            await wait_until(pilot, lambda: gc.get_freeze_count() > 0, what="the freeze")

    run(scenario())


def test_keys_and_pastes_before_the_editor_exists_reach_it_in_order(tui: TuiHarness) -> None:
    faux = tui.faux(text_turn("answer"))
    app = tui.app(faux)
    after_first_frame = app._after_first_frame
    app._after_first_frame = lambda: None  # type: ignore[assignment,method-assign,return-value]

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            placeholder = app.query_one(EditorPlaceholder)
            assert app.focused is placeholder
            assert "Ask picode" in str(placeholder.render())
            await type_text(pilot, "fix ")
            app.post_message(events.Paste("the bug"))  # what a terminal paste arrives as
            await pilot.pause()
            await pilot.press("enter")
            assert not app.query(UserMessageView)  # nothing sent yet: there is no editor
            app.call_later(after_first_frame)
            await wait_until(pilot, lambda: app.query(UserMessageView), what="the prompt")
            assert not app.query(EditorPlaceholder)
            assert app.editor.has_focus
            await wait_until(pilot, lambda: faux.requests)
            last = faux.requests[0].messages[-1]
            assert isinstance(last, UserMessage) and last.text == "fix the bug"

    run(scenario())


def test_a_key_routed_to_the_placeholder_as_the_editor_takes_over_is_passed_on(
    tui: TuiHarness,
) -> None:
    app = tui.app(tui.faux())
    app._after_first_frame = lambda: None  # type: ignore[assignment,method-assign,return-value]

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            placeholder = app.query_one(EditorPlaceholder)
            await type_text(pilot, "a")
            await app.mount(app.editor, before=placeholder)
            # Already in the placeholder's queue when the focus moves to the editor.
            placeholder.post_message(events.Key("b", "b"))
            placeholder._finish(app.editor)
            await wait_until(pilot, lambda: app.editor.text == "ab", what="both keys")
            await wait_until(pilot, lambda: not app.query(EditorPlaceholder), what="removal")
            assert app.editor.has_focus

    run(scenario())


def test_after_a_failed_start_typing_is_kept_and_new_opens_a_session(tui: TuiHarness) -> None:
    from picode.session.store.sessions import SessionNotFoundError
    from tests.tui.conftest import has_notice, send

    faux = tui.faux(text_turn("hello there"))
    real_open = tui.app(faux).config.open_session
    asked: list[object] = []

    async def open_session(spec: str | None = None) -> Any:
        asked.append(spec)
        if spec is None:
            raise SessionNotFoundError("no session id starts with 'zzzz'")
        return await real_open(spec)

    app = tui.app(faux, open_session=open_session)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await type_text(pilot, "hi")
            await pilot.press("enter")
            await wait_until(pilot, lambda: has_notice(app, "zzzz"), what="the error")
            await wait_until(pilot, lambda: app.editor.text == "hi", what="text given back")
            await send(pilot, " again")
            await wait_until(pilot, lambda: has_notice(app, "No session is open"))
            assert app.editor.text == "hi again" and not faux.requests
            app.editor.reset()
            await send(pilot, "/new")
            await wait_until(pilot, lambda: app.session is not None, what="a new session")
            assert asked == [None, "new"]
            # What said the start failed no longer holds: none of it stays on screen.
            await wait_until(pilot, lambda: not has_notice(app, "zzzz"), what="error gone")
            assert not has_notice(app, "No session is open")
            await send(pilot, "hi again")
            await wait_until(pilot, lambda: faux.requests, what="sent")
            last = faux.requests[0].messages[-1]
            assert isinstance(last, UserMessage) and last.text == "hi again"

    run(scenario())


def test_the_sdk_import_starts_before_the_editor_is_built(
    tui: TuiHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A message typed at the first frame waits for the SDK longest: its import is the first
    thing started after that frame, before the editor's modules and the session."""
    from tests.fake_modules import SLOW_IMPORT_GATE

    faux = tui.faux()
    serve_api_with(monkeypatch, faux.model.api, SLOW_SDK)
    SLOW_IMPORT_GATE.clear()
    app = tui.app(faux, warm_provider=True)
    importing_when_built: list[bool] = []
    mount_editor = PicodeApp._mount_editor

    async def mount_editor_after_looking(self: PicodeApp) -> None:
        importing_when_built.append(not self.warmup.ready(faux.model.api))
        await mount_editor(self)

    monkeypatch.setattr(PicodeApp, "_mount_editor", mount_editor_after_looking)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: importing_when_built, what="the editor")
            SLOW_IMPORT_GATE.set()

    try:
        run(scenario())
    finally:
        SLOW_IMPORT_GATE.set()
    assert importing_when_built[0] is True


def test_the_collector_paused_at_launch_runs_once_the_session_is_open_and_the_sdk_in(
    tui: TuiHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from picode.tui import gc_pause
    from tests.fake_modules import SLOW_IMPORT_GATE

    faux = tui.faux()
    serve_api_with(monkeypatch, faux.model.api, SLOW_SDK)
    SLOW_IMPORT_GATE.clear()
    app = tui.app(faux, warm_provider=True)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None, what="the session")
            await pilot.pause()
            assert not gc.isenabled()  # the SDK is still being imported
            SLOW_IMPORT_GATE.set()
            await wait_until(pilot, gc.isenabled, what="the collector running again")

    gc_pause.pause_collector()
    try:
        run(scenario())
    finally:
        SLOW_IMPORT_GATE.set()
        gc_pause.resume_collector()
        gc.enable()


def test_a_session_that_cannot_open_lets_the_paused_collector_run(tui: TuiHarness) -> None:
    from picode.tui import gc_pause

    async def failing_open() -> Any:
        raise RuntimeError("session file is locked")

    app = tui.app(tui.faux(), open_session=failing_open)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.query(NoticeView), what="the error")
            await wait_until(pilot, gc.isenabled, what="the collector running again")

    gc_pause.pause_collector()
    try:
        run(scenario())
    finally:
        gc_pause.resume_collector()
        gc.enable()


def test_the_collector_is_not_paused_longer_than_its_limit(
    tui: TuiHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person answering the trust question or browsing the session picker keeps the
    session from opening: the collector runs again after a few seconds all the same."""
    from picode.tui import gc_pause

    monkeypatch.setattr(gc_pause, "PAUSE_LIMIT_S", 0.05)
    app = tui.app(tui.faux())
    gate = hold_open(app)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, gc.isenabled, what="the collector running again")
            assert app.session is None  # still opening
            gate.set()

    gc_pause.pause_collector()
    try:
        run(scenario())
    finally:
        gc_pause.resume_collector()
        gc.enable()


def test_a_message_is_answered_without_building_the_command_controller(
    tui: TuiHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only text with a leading slash can be a command: the first answer does not wait for
    the command controller and the pickers it brings, nor for the forms of an MCP server's
    questions."""
    monkeypatch.delitem(sys.modules, "picode.tui.elicitation", raising=False)
    faux = tui.faux(text_turn("answer"), text_turn("again"))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None, what="the session")
            await type_text(pilot, "hello")
            await pilot.press("enter")
            await wait_until(pilot, lambda: faux.requests, what="the request")
            assert "commands" not in app.__dict__
            assert "picode.tui.elicitation" not in sys.modules
            await type_text(pilot, "/model")  # a command still works as before
            await pilot.press("enter")
            await wait_until(pilot, lambda: "commands" in app.__dict__, what="the controller")

    run(scenario())


def test_the_editors_hint_drops_whole_hints_to_fit_a_narrow_terminal(tui: TuiHarness) -> None:
    from picode.tui.app import PLACEHOLDER
    from tests.tui.hosts import screen_text

    app = tui.app(tui.faux())
    after_first_frame = app._after_first_frame
    app._after_first_frame = lambda: None  # type: ignore[assignment,method-assign,return-value]

    def hint_line() -> str:
        return next(line for line in screen_text(app).splitlines() if "Ask picode" in line)

    async def scenario() -> None:
        async with app.run_test(size=(56, 20)) as pilot:
            await pilot.pause()
            assert app.query_one(EditorPlaceholder)
            shown = "Ask picode…  (enter to send, / commands, @ files)"
            assert shown in hint_line()  # the stand-in of the first frame
            app.call_later(after_first_frame)
            await wait_until(pilot, lambda: not app.query(EditorPlaceholder), what="editor")
            await wait_until(pilot, lambda: shown in hint_line(), what="the editor's hint")
            await pilot.resize_terminal(30, 20)
            await wait_until(pilot, lambda: "Ask picode…  (" not in hint_line(), what="head")
            assert hint_line().split("│")[1].strip() == "Ask picode…"
            await pilot.resize_terminal(120, 20)
            await wait_until(pilot, lambda: PLACEHOLDER in hint_line(), what="every hint")

    run(scenario())


def test_fit_placeholder_never_cuts_a_hint() -> None:
    from picode.tui.widgets.editor_placeholder import fit_placeholder

    text = "Ask…  (one, two, three)"
    assert fit_placeholder(text, 40) == text
    assert fit_placeholder(text, len(text) - 1) == "Ask…  (one, two)"
    assert fit_placeholder(text, 11) == "Ask…  (one)"
    assert fit_placeholder(text, 10) == "Ask…"
    assert fit_placeholder("no hints here", 5) == "no hints here"
