"""Completion in the real app: ``/`` commands and ``@`` files above the editor."""

from __future__ import annotations

import threading

import pytest

from picode.ai.providers.faux import FauxText, FauxTurn
from picode.tools.rg_path import find_rg
from picode.tui.completion.files import FileIndex
from picode.tui.controllers import completion as completion_module
from tests.tui.conftest import SIZE, TuiHarness, opened, run, send, type_text, wait_until

needs_rg = pytest.mark.skipif(find_rg() is None, reason="file completion uses rg")


def test_slash_lists_commands_above_the_editor_and_narrows_as_you_type(tui: TuiHarness) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            popup = app.completion_popup
            await pilot.press("/")
            await wait_until(pilot, lambda: popup.is_open)
            names = [item.value for item in popup.items]
            assert names[:3] == ["/model", "/thinking", "/theme"] and "/quit" in names
            assert popup.region.bottom <= app.editor.region.y  # drawn above the editor
            await type_text(pilot, "th")
            await wait_until(
                pilot, lambda: [i.value for i in popup.items] == ["/thinking", "/theme"]
            )
            await pilot.press("down", "tab")
            assert app.editor.text == "/theme "
            await wait_until(pilot, lambda: not popup.is_open)

    run(scenario())


def test_on_a_short_terminal_the_list_scrolls_and_the_footer_stays(tui: TuiHarness) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=(80, 15)) as pilot:
            await opened(pilot)
            popup = app.completion_popup
            await pilot.press("/")
            await wait_until(pilot, lambda: popup.is_open)
            await pilot.pause()
            height = app.screen.size.height
            # The status line, the editor and the footer are all still on the screen.
            for widget in (app.status, app.editor, app.info_footer):
                assert widget.region.y >= 0 and widget.region.bottom <= height, widget
            assert popup.region.height >= 2 and len(popup.items) > popup.region.height

    run(scenario())


def test_enter_runs_a_command_that_needs_no_argument_and_waits_for_one_that_does(
    tui: TuiHarness,
) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "/na")
            assert app.editor.text == "/name "  # /name <name>: completed, not sent
            await pilot.press("ctrl+c")
            await send(pilot, "/hot")
            await wait_until(pilot, lambda: app.editor.text == "")
            await wait_until(pilot, lambda: len(app.query("InfoView")) == 1)

    run(scenario())


def test_esc_closes_the_list_before_it_interrupts(tui: TuiHarness) -> None:
    app = tui.app(tui.faux(FauxTurn([FauxText("busy ")], hang=True)))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "keep working")
            await wait_until(pilot, lambda: app.status.is_working)
            popup = app.completion_popup
            await pilot.press("/")
            await wait_until(pilot, lambda: popup.is_open)
            await pilot.press("escape")
            assert not popup.is_open
            assert app.session.is_running and app.editor.text == "/"
            await pilot.press("escape")
            await wait_until(pilot, lambda: not app.session.is_running, what="abort")

    run(scenario())


def test_history_recall_does_not_open_the_list(tui: TuiHarness) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            app.editor.add_history("/model")
            app.editor.add_history("plain text")
            await pilot.press("up", "up")
            assert app.editor.text == "/model"
            assert not app.completion_popup.is_open
            await pilot.press("down")  # still history, not the list
            assert app.editor.text == "plain text"

    run(scenario())


def _project(tui: TuiHarness) -> None:
    (tui.cwd / "src").mkdir()
    (tui.cwd / "src" / "hello.py").write_text("print('hi')\n", encoding="utf-8")
    (tui.cwd / "help.md").write_text("help\n", encoding="utf-8")
    (tui.cwd / "build").mkdir()
    (tui.cwd / "build" / "hello.o").write_text("binary\n", encoding="utf-8")
    (tui.cwd / ".gitignore").write_text("build/\n", encoding="utf-8")


@needs_rg
def test_at_completes_file_paths_fuzzily_and_skips_ignored_files(tui: TuiHarness) -> None:
    _project(tui)
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            popup = app.completion_popup
            await type_text(pilot, "look at @hel")
            await wait_until(pilot, lambda: popup.is_open, what="the index and the list")
            values = [item.value for item in popup.items]
            assert values[0] == "help.md" and "src/hello.py" in values
            assert not any(v.startswith("build") for v in values)
            await type_text(pilot, "lopy")
            await wait_until(pilot, lambda: [i.value for i in popup.items] == ["src/hello.py"])
            await pilot.press("enter")  # accepts; does not send
            assert app.editor.text == "look at @src/hello.py "
            assert app.session.messages == []

    run(scenario())


@needs_rg
def test_a_large_index_is_searched_in_a_thread(
    tui: TuiHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(tui)
    monkeypatch.setattr(completion_module, "THREADED_SEARCH_PATHS", 0)
    searched_in: list[str] = []
    real_search = FileIndex.search

    def spy(index: FileIndex, query: str, limit: int = 20) -> list[str]:
        searched_in.append(threading.current_thread().name)
        return real_search(index, query, limit)

    monkeypatch.setattr(FileIndex, "search", spy)
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            popup = app.completion_popup
            await type_text(pilot, "@src/")
            await wait_until(pilot, lambda: popup.is_open)
            assert [item.value for item in popup.items] == ["src/", "src/hello.py"]
            assert searched_in and threading.main_thread().name not in searched_in

    run(scenario())
