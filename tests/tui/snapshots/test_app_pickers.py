"""How the pickers and the approval prompt look inside the real app (clock, paths, keys and
session times pinned)."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.ai.types import UserMessage
from picode.session.config.settings import Settings
from picode.session.store.sessions import SessionStore
from picode.tui.app import PicodeApp
from picode.tui.pickers import ModelPicker, SessionPicker
from tests.tui.conftest import SIZE, TuiHarness, press_now, type_text, wait_until


@pytest.fixture(autouse=True)
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    # The real prompt names the temporary cwd and today's date; token estimates would vary.
    monkeypatch.setattr(
        "picode.session.system_prompt.build_system_prompt", lambda **_: "You are picode."
    )
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")


def _command(text: str, screen: type) -> Any:
    async def run_before(pilot: Any) -> None:
        app: PicodeApp = pilot.app
        await wait_until(pilot, lambda: app.session is not None, what="session")
        app.editor.cursor_blink = False
        await type_text(pilot, text)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, screen), what=screen.__name__)
        picker: Any = app.screen
        picker.filter_input.cursor_blink = False
        await wait_until(pilot, lambda: not getattr(picker, "is_loading", False))
        await pilot.pause()

    return run_before


def test_model_picker_in_the_app(tui: TuiHarness, snap_compare: Any) -> None:
    app = tui.app(tui.faux())
    assert snap_compare(app, terminal_size=SIZE, run_before=_command("/model", ModelPicker))


@pytest.fixture
def fixed_root_tui() -> Iterator[TuiHarness]:
    """A harness whose folder name has the same length on every run: the session files
    record the cwd, and the picker shows their sizes (pytest's numbered folders vary)."""
    root = Path(tempfile.mkdtemp(prefix="picode-picker-"))
    harness = TuiHarness(root)
    try:
        yield harness
    finally:
        harness.close()
        shutil.rmtree(root, ignore_errors=True)


def test_session_picker_in_the_app(fixed_root_tui: TuiHarness, snap_compare: Any) -> None:
    tui = fixed_root_tui
    store = SessionStore(tui.paths.sessions_dir)
    now = time.time()
    firsts = [
        ("Fix the flaky test in the store index", 5 * 60, None),
        ("Add a light theme", 3 * 3600, "Themes"),
        ("Why is resuming slow?", 3 * 86400, None),
    ]
    for text, age, name in firsts:
        session = store.create(tui.cwd)
        session.append_message(UserMessage(text))
        if name:
            session.append_session_info(name)
        session.close()
        os.utime(session.path, (now - age, now - age))
    app = tui.app(tui.faux())
    assert snap_compare(app, terminal_size=SIZE, run_before=_command("/resume", SessionPicker))


def test_approval_prompt_in_the_app(tui: TuiHarness, snap_compare: Any) -> None:
    faux = tui.faux(
        tool_turn(FauxToolCall("bash", {"command": "rm -rf build && make -j4 test"})),
        text_turn("Done."),
    )
    app = tui.app(faux, settings=Settings(approval="all"))
    app.approvals.arm_delay = 0  # drawn armed; arming itself is tested in test_app_approval

    async def run_before(pilot: Any) -> None:
        await wait_until(pilot, lambda: app.session is not None, what="session")
        app.editor.cursor_blink = False
        await type_text(pilot, "clean and test")
        press_now(app, "enter")
        await wait_until(pilot, lambda: app.approvals.prompt is not None, what="prompt")
        prompt = app.approvals.prompt
        assert prompt is not None
        await wait_until(pilot, lambda: prompt.is_armed)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_plan_prompt_in_the_app(tui: TuiHarness, snap_compare: Any) -> None:
    plan = (
        "## Steps\n\n1. Read `src/app.py`\n2. Add **retry** to `fetch()`\n\n"
        "```python\nretry(3)\n```"
    )
    faux = tui.faux(tool_turn(FauxToolCall("exit_plan_mode", {"plan": plan})), text_turn("Ok."))
    app = tui.app(faux)
    app.approvals.arm_delay = 0

    async def run_before(pilot: Any) -> None:
        await wait_until(pilot, lambda: app.session is not None, what="session")
        app.session.set_mode("plan")
        app.editor.cursor_blink = False
        await type_text(pilot, "add retries")
        press_now(app, "enter")
        await wait_until(pilot, lambda: app.approvals.prompt is not None, what="prompt")
        prompt = app.approvals.prompt
        assert prompt is not None
        await wait_until(pilot, lambda: prompt.is_armed)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
