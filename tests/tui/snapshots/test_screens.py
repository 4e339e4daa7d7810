"""How the pickers and the approval prompt look (pytest-textual-snapshot), data and time pinned."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import Input

from picode.session.safety.approval import ApprovalRequest, preview_for
from picode.tui.approval import ApprovalPrompt
from picode.tui.pickers import ModelPicker, SessionPicker
from tests.tui.conftest import SIZE, wait_until
from tests.tui.hosts import ScreenHost, WidgetHost
from tests.tui.picker_fakes import NOW_S, FakeStore, make_models, summary


def _settled_picker(typed: str = "", *, keys: tuple[str, ...] = ()) -> Any:
    async def run_before(pilot: Any) -> None:
        app: ScreenHost = pilot.app
        await wait_until(pilot, lambda: app.picker is not None and app.picker.is_mounted)
        picker: Any = app.picker
        picker.filter_input.cursor_blink = False
        await wait_until(pilot, lambda: not getattr(picker, "is_loading", False))
        for key in keys:
            await pilot.press(key)
            await wait_until(pilot, lambda: not getattr(picker, "is_loading", False))
        if typed:
            await pilot.press(*typed)
        await pilot.pause()

    return run_before


def test_model_picker(snap_compare: Any) -> None:
    models = make_models()
    app = ScreenHost(lambda: ModelPicker(models, models[2]))
    assert snap_compare(app, terminal_size=SIZE, run_before=_settled_picker())


def test_model_picker_filtered(snap_compare: Any) -> None:
    models = make_models()
    app = ScreenHost(lambda: ModelPicker(models, models[2]))
    assert snap_compare(app, terminal_size=SIZE, run_before=_settled_picker("claude"))


def _store() -> FakeStore:
    here, there = Path("/home/me/project"), Path("/home/me/work/other-project")
    firsts = [
        "Fix the flaky test in store_index: a torn last line is counted twice",
        "Add a light theme that follows the terminal background",
        "Why does resuming a 128 MB session take two seconds?",
        "Write the HTML export with inline CSS",
        "Refactor the provider retry loop",
    ]
    sessions = [
        summary(i, here if i % 2 == 0 else there, first=firsts[i % len(firsts)]) for i in range(12)
    ]
    sessions[0].name = "Torn lines"
    sessions[3].name = "Export"
    return FakeStore(sessions)


def test_session_picker(snap_compare: Any) -> None:
    store = _store()
    app = ScreenHost(
        lambda: SessionPicker(
            store, Path("/home/me/project"), now=lambda: NOW_S, home=Path("/home/me")
        )
    )
    assert snap_compare(app, terminal_size=SIZE, run_before=_settled_picker())


def test_session_picker_all_folders(snap_compare: Any) -> None:
    store = _store()
    app = ScreenHost(
        lambda: SessionPicker(
            store, Path("/home/me/project"), now=lambda: NOW_S, home=Path("/home/me")
        )
    )
    assert snap_compare(app, terminal_size=SIZE, run_before=_settled_picker(keys=("tab",)))


def test_approval_prompt_for_an_edit(snap_compare: Any) -> None:
    args = {
        "path": "src/app.py",
        "edits": [
            {
                "old_text": "def greet(name):\n    print('hello ' + name)",
                "new_text": 'def greet(name: str) -> None:\n    print(f"hello {name}")',
            },
        ],
    }
    request = ApprovalRequest("call-1", "edit", args, preview_for("edit", args))
    editor = Input(id="editor", placeholder="Ask picode…")
    prompt = ApprovalPrompt(request, arm_delay=0)
    app = WidgetHost(prompt, editor)

    async def run_before(pilot: Any) -> None:
        editor.cursor_blink = False
        prompt.focus()
        await wait_until(pilot, lambda: prompt.is_armed)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(90, 16), run_before=run_before)


def test_approval_prompt_for_a_command(snap_compare: Any) -> None:
    args = {"command": "rm -rf build && make -j4 test"}
    request = ApprovalRequest("call-2", "bash", args, preview_for("bash", args))
    prompt = ApprovalPrompt(request, arm_delay=0)
    app = WidgetHost(prompt)

    async def run_before(pilot: Any) -> None:
        prompt.focus()
        await wait_until(pilot, lambda: prompt.is_armed)
        await pilot.press("n", *"use make clean")
        prompt.reason_input.cursor_blink = False
        await pilot.pause()

    assert snap_compare(app, terminal_size=(90, 12), run_before=run_before)
