"""How the app looks (pytest-textual-snapshot): clock, paths, version and prompt pinned."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from picode.ai.providers.faux import (
    FauxProvider,
    FauxText,
    FauxThinking,
    FauxToolCall,
    FauxTurn,
    text_turn,
)
from picode.session.config.settings import Settings
from picode.tui.app import PicodeApp
from picode.tui.widgets.notice import NoticeView
from picode.tui.widgets.tool_call import ToolCallView
from tests.tui.conftest import SIZE, TuiHarness, press_now, type_text, wait_until

ANSWER = """I'll switch the greeting to an f-string.

```python
def greet(name: str) -> None:
    print(f"hello {name}")
```
"""


@pytest.fixture(autouse=True)
def fixed_system_prompt(monkeypatch: pytest.MonkeyPatch) -> None:
    # The real prompt names the temporary cwd and today's date; token estimates would vary.
    monkeypatch.setattr(
        "picode.session.system_prompt.build_system_prompt", lambda **_: "You are picode."
    )


def _finished_turn(tui: TuiHarness) -> FauxProvider:
    (tui.cwd / "hello.py").write_text(
        "def greet(name):\n    print('hello ' + name)\n\n\ngreet('world')\n", encoding="utf-8"
    )
    edit = FauxToolCall(
        "edit",
        {
            "path": "hello.py",
            "old_text": "    print('hello ' + name)",
            "new_text": '    print(f"hello {name}")',
        },
    )
    bash = FauxToolCall("bash", {"command": "printf 'ok: %s\\n' one two three"})
    return tui.faux(
        FauxTurn(
            [FauxThinking("The print call should use an f-string."), FauxText(ANSWER), edit, bash],
            usage=(1200, 80),
        ),
        text_turn("Done: `hello.py` now uses an **f-string**.", usage=(1500, 20)),
    )


def _prepare(prompt: str, until: Callable[[PicodeApp], object]) -> Callable[[Any], Any]:
    async def run_before(pilot: Any) -> None:
        app: PicodeApp = pilot.app
        await wait_until(pilot, lambda: app.session is not None, what="session")
        app.editor.cursor_blink = False
        if prompt:
            await type_text(pilot, prompt)
            press_now(app, "enter")
        await wait_until(pilot, lambda: until(app), timeout=10, what="scenario settled")
        await pilot.pause()

    return run_before


def _idle_after_tools(app: PicodeApp) -> bool:
    session = app.session
    views = list(app.query(ToolCallView))
    return (
        session is not None
        and not session.is_running
        and len(views) == 2
        and all(v.is_finished for v in views)
    )


def test_start_screen(tui: TuiHarness, snap_compare: Any) -> None:
    app = tui.app(tui.faux())
    assert snap_compare(app, terminal_size=SIZE, run_before=_prepare("", lambda a: True))


def test_finished_turn_with_thinking_text_diff_and_bash(tui: TuiHarness, snap_compare: Any) -> None:
    app = tui.app(_finished_turn(tui))
    assert snap_compare(
        app, terminal_size=SIZE, run_before=_prepare("fix hello.py", _idle_after_tools)
    )


def test_finished_turn_in_the_light_theme(tui: TuiHarness, snap_compare: Any) -> None:
    app = tui.app(_finished_turn(tui), theme="light")
    assert snap_compare(
        app, terminal_size=SIZE, run_before=_prepare("fix hello.py", _idle_after_tools)
    )


def test_turn_interrupted_by_esc(tui: TuiHarness, snap_compare: Any) -> None:
    faux = tui.faux(
        FauxTurn([FauxText("Looking at the failing test, the first thing ")], hang=True)
    )
    app = tui.app(faux)

    async def run_before(pilot: Any) -> None:
        await _prepare("why does the test fail?", lambda a: "thing" in _last_text(a))(pilot)
        press_now(pilot.app, "escape")
        await wait_until(
            pilot, lambda: any(n.text == "Interrupted" for n in pilot.app.query(NoticeView))
        )
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_retry_countdown(tui: TuiHarness, snap_compare: Any) -> None:
    settings = Settings()
    settings.retry.base_delay_ms = 4000
    faux = tui.faux(
        FauxTurn(error="Overloaded", error_before_stream=True, usage=(0, 0)),
        text_turn("never reached in this snapshot"),
    )
    app = tui.app(faux, settings=settings)
    run_before = _prepare("hello", lambda a: a.status.is_retrying)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_retry_answered_after_a_cut_stream(tui: TuiHarness, snap_compare: Any) -> None:
    settings = Settings()
    settings.retry.base_delay_ms = 5
    faux = tui.faux(
        FauxTurn([FauxText("Half an ans")], error="Overloaded", usage=(0, 0)),
        text_turn("The whole answer.", usage=(40, 8)),
    )
    app = tui.app(faux, settings=settings)
    run_before = _prepare(
        "hello",
        lambda a: (
            any(n.text.startswith("Answered after") for n in a.query(NoticeView))
            and not a.session.is_running
        ),
    )
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def _last_text(app: PicodeApp) -> str:
    from picode.tui.widgets.markdown import StreamingMarkdown

    blocks = list(app.query(StreamingMarkdown))
    return blocks[-1].source if blocks else ""


def test_reply_cut_at_the_output_limit(tui: TuiHarness, snap_compare: Any) -> None:
    faux = tui.faux(
        FauxTurn([FauxText("The first half of a long answer")], stop_reason="length", usage=(9, 9))
    )
    app = tui.app(faux)
    run_before = _prepare(
        "explain", lambda a: any("output limit" in n.text for n in a.query(NoticeView))
    )
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
