"""How the app looks at 60 columns: the footer laid out by priority, the `/` list aligned."""

from __future__ import annotations

from typing import Any

import pytest

from picode.ai.providers.faux import text_turn
from picode.tui.app import PicodeApp
from tests.tui.conftest import TuiHarness, type_text, wait_until

NARROW = (60, 20)


@pytest.fixture(autouse=True)
def fixed_system_prompt(monkeypatch: pytest.MonkeyPatch) -> None:
    # The real prompt names the temporary cwd and today's date; token estimates would vary.
    monkeypatch.setattr(
        "picode.session.system_prompt.build_system_prompt", lambda **_: "You are picode."
    )


def _narrow_app(tui: TuiHarness, **config: Any) -> PicodeApp:
    faux = tui.faux(text_turn("Done.", usage=(12_400, 310)), model_id="claude-sonnet-4-5")
    config.setdefault("cwd_label", "~/src/a-rather-long-project-name")
    config.setdefault("branch", "feature/narrow-footer")
    return tui.app(faux, options={"thinking": "high"}, **config)


def _settled(typed: str, *, send: str = "") -> Any:
    async def run_before(pilot: Any) -> None:
        app: PicodeApp = pilot.app
        await wait_until(pilot, lambda: app.session is not None, what="session")
        app.editor.cursor_blink = False
        if send:
            await type_text(pilot, send)
            await pilot.press("enter")
            await wait_until(
                pilot,
                lambda: app.session is not None and len(app.session.messages) == 2,
                what="the reply",
            )
            await wait_until(pilot, lambda: not app.session.is_running, what="idle")
        if typed:
            await type_text(pilot, typed)
        await pilot.pause()
        await pilot.pause()

    return run_before


def test_narrow_footer_after_a_turn(tui: TuiHarness, snap_compare: Any) -> None:
    app = _narrow_app(tui)
    assert snap_compare(app, terminal_size=NARROW, run_before=_settled("", send="hi"))


def test_narrow_command_list(tui: TuiHarness, snap_compare: Any) -> None:
    app = _narrow_app(tui)
    assert snap_compare(app, terminal_size=NARROW, run_before=_settled("/"))
