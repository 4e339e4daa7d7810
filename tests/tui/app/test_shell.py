"""``!cmd`` in the real app, Ctrl+G (external editor), Ctrl+Z and copying a selection."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from textual.selection import Selection

from picode.ai.providers.faux import FauxText, FauxTurn, text_turn
from picode.ai.types import UserMessage
from picode.tui.widgets.notice import NoticeView
from picode.tui.widgets.tool_call import ToolCallView
from tests.tui.conftest import (
    SIZE,
    TuiHarness,
    has_notice,
    opened,
    run,
    send,
    type_text,
    wait_until,
)


def _shell_views(app: Any) -> list[ToolCallView]:
    return [v for v in app.query(ToolCallView) if v.has_class("-user-shell")]


def test_bang_runs_the_command_shows_it_and_adds_it_to_the_context(tui: TuiHarness) -> None:
    faux = tui.faux(text_turn("I see the greeting."))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "!echo hello from the shell")
            await wait_until(pilot, lambda: _shell_views(app) and _shell_views(app)[0].is_finished)
            view = _shell_views(app)[0]
            assert view.state == "success" and "hello from the shell" in view.body_text
            message = app.session.messages[-1]
            assert isinstance(message, UserMessage)
            assert (
                message.text == "I ran `echo hello from the shell`:\n```\nhello from the shell\n```"
            )
            assert app.session.display_count == 1  # saved in the session too
            await send(pilot, "what did it say?")
            await wait_until(pilot, lambda: faux.requests and not app.session.is_running)
            sent = [m.text for m in faux.last_request.messages]  # type: ignore[union-attr]
            assert sent[-2].startswith("I ran `echo hello from the shell`")

    run(scenario())


def test_double_bang_only_shows_the_output(tui: TuiHarness) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "!!printf 'private'")
            await wait_until(pilot, lambda: _shell_views(app) and _shell_views(app)[0].is_finished)
            assert "private" in _shell_views(app)[0].body_text
            assert app.session.messages == []

    run(scenario())


def test_bang_while_busy_queues_the_output_as_a_follow_up(tui: TuiHarness) -> None:
    app = tui.app(tui.faux(FauxTurn([FauxText("thinking aloud ")], hang=True)))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "start")
            await wait_until(pilot, lambda: app.status.is_working)
            await send(pilot, "!echo meanwhile")
            await wait_until(pilot, lambda: app.session.queued_follow_ups)
            assert app.session.queued_follow_ups == ["I ran `echo meanwhile`:\n```\nmeanwhile\n```"]
            assert app.queue.follow_ups  # shown above the editor

    run(scenario())


def test_esc_stops_a_running_command_and_keeps_it_out_of_the_context(tui: TuiHarness) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "!echo started; sleep 30")
            await wait_until(pilot, lambda: app.shell.is_running())
            await wait_until(pilot, lambda: "started" in _shell_views(app)[0].body_text)
            # While it runs: the spinner, the time and how to stop it.
            assert "esc to interrupt" in app.status.render().plain
            await pilot.press("escape")
            await wait_until(pilot, lambda: _shell_views(app)[0].is_finished, timeout=10)
            assert has_notice(app, "Command stopped")
            assert app.session.messages == []
            await wait_until(pilot, lambda: not app.status.is_working)

    run(scenario())


def test_a_long_output_is_folded_like_a_tools_and_ctrl_o_unfolds_it(tui: TuiHarness) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "!!seq 1 2000")
            await wait_until(
                pilot, lambda: bool(_shell_views(app)) and _shell_views(app)[0].is_finished
            )
            view = _shell_views(app)[0]
            assert not view.expanded
            assert view.outer_size.height < 30  # its tail, not 2,000 lines
            await pilot.press("ctrl+o")
            await wait_until(pilot, lambda: view.expanded)

    run(scenario())


def _script(folder: Path, name: str, body: str) -> str:
    path = folder / name
    path.write_text(f"#!{sys.executable}\n{body}", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_ctrl_g_edits_the_message_in_the_editor_program(
    tui: TuiHarness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    editor = _script(
        tmp_path,
        "fake-editor",
        "import sys\npath = sys.argv[1]\n"
        "text = open(path, encoding='utf-8').read()\n"
        "open(path, 'w', encoding='utf-8').write(text.upper())\n",
    )
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", editor)
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await type_text(pilot, "draft")
            await pilot.press("ctrl+g")
            await wait_until(pilot, lambda: app.editor.text == "DRAFT")

    run(scenario())


def test_ctrl_g_a_line_appended_in_the_editor_is_a_line_of_its_own(
    tui: TuiHarness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What `echo more >> file` or vim's `o` does: the file must end with a newline for
    # the new line to start on a line of its own.
    seen = tmp_path / "seen.txt"
    editor = _script(
        tmp_path,
        "appending-editor",
        "import shutil, sys\npath = sys.argv[1]\n"
        f"shutil.copy(path, {str(seen)!r})\n"
        "open(path, 'a', encoding='utf-8').write('second line\\n')\n",
    )
    viewed = tmp_path / "viewed"
    untouched = _script(tmp_path, "viewer", f"open({str(viewed)!r}, 'w').close()\n")
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", editor)
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await type_text(pilot, "first line")
            await pilot.press("ctrl+g")
            await wait_until(pilot, lambda: app.editor.text == "first line\nsecond line")
            assert seen.read_text(encoding="utf-8") == "first line\n"
            monkeypatch.setenv("EDITOR", untouched)
            await pilot.press("ctrl+g")
            await wait_until(pilot, viewed.exists, what="the second editor run")
            await pilot.pause()
            assert app.editor.text == "first line\nsecond line"  # no newline gained or lost

    run(scenario())


def test_ctrl_g_reports_a_failing_editor_and_keeps_the_text(
    tui: TuiHarness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = _script(tmp_path, "broken-editor", "import sys\nsys.exit(3)\n")
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", broken)
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await type_text(pilot, "keep me")
            await pilot.press("ctrl+g")
            await wait_until(pilot, lambda: has_notice(app, "exited with status 3"))
            assert app.editor.text == "keep me"
            monkeypatch.delenv("EDITOR")
            (tmp_path / "no-editors").mkdir()
            monkeypatch.setenv("PATH", str(tmp_path / "no-editors"))
            await pilot.press("ctrl+g")
            await wait_until(pilot, lambda: has_notice(app, "set $VISUAL or $EDITOR"))
            assert app.editor.text == "keep me"

    run(scenario())


def test_without_visual_or_editor_the_usual_editors_are_tried(tmp_path: Path) -> None:
    from picode.tui.controllers.external_editor import ExternalEditorError, editor_command

    folder = tmp_path / "bin"
    folder.mkdir()
    for name in ("vi", "nano"):
        script = folder / name
        script.write_text("#!/bin/sh\n", encoding="utf-8")
        script.chmod(0o755)
    assert editor_command({"PATH": str(folder)}) == ["nano"]  # before vi, as git does
    assert editor_command({"PATH": str(folder), "EDITOR": "code -w"}) == ["code", "-w"]
    with pytest.raises(ExternalEditorError, match="none of editor, nano or vi"):
        editor_command({"PATH": str(tmp_path)})


def test_ctrl_z_undoes_in_a_non_empty_editor_and_suspends_on_an_empty_one(
    tui: TuiHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = tui.app(tui.faux())
    suspended: list[bool] = []
    monkeypatch.setattr(app, "action_suspend_process", lambda: suspended.append(True))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await type_text(pilot, "typo")
            await pilot.press("ctrl+z")
            assert app.editor.text == "" and not suspended  # the editor's undo
            await pilot.press("ctrl+z")
            assert suspended == [True]

    run(scenario())


def test_ctrl_c_copies_a_selection_instead_of_clearing(tui: TuiHarness) -> None:
    app = tui.app(tui.faux())
    app.clipboard_env = {"PATH": os.devnull}  # no clipboard tool: OSC 52 only

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await type_text(pilot, "copy this")
            app.editor.select_all()
            await pilot.press("ctrl+c")
            await wait_until(pilot, lambda: app.clipboard == "copy this")
            assert app.editor.text == "copy this"  # not cleared
            await wait_until(
                pilot, lambda: any("OSC 52" in str(n.message) for n in app._notifications)
            )
            app.editor.move_cursor((0, 0))  # no selection: Ctrl+C clears again
            await pilot.press("ctrl+c")
            assert app.editor.text == ""
            # Text selected with the mouse in the transcript.
            app.report("a notice worth keeping")
            await pilot.pause()
            notice = app.query(NoticeView).last()
            app.screen.selections = {notice: Selection(None, None)}
            await pilot.press("ctrl+c")
            await wait_until(pilot, lambda: app.clipboard == "a notice worth keeping")
            assert not app.screen.selections  # cleared once copied

    run(scenario())
