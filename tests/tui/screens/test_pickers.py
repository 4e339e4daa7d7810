"""Pickers: filtering, Tab between scopes, Enter's result, Esc's cancel and restore."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from picode.ai.types import UserMessage
from picode.session.store.index import SessionSummary
from picode.session.store.sessions import SessionStore
from picode.tui.pickers import (
    ForkPicker,
    ModelPicker,
    SessionPicker,
    ThemePicker,
    format_price,
    format_size,
    format_tokens,
    relative_time,
)
from tests.tui.conftest import SIZE, run, wait_until
from tests.tui.hosts import ScreenHost, screen_text
from tests.tui.picker_fakes import NOW_MS, NOW_S, FakeStore, make_models, summary


def _drive(make: Any, body: Any) -> ScreenHost:
    app = ScreenHost(make)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.picker is not None and app.picker.is_mounted)
            await pilot.pause()
            await body(app, app.picker, pilot)

    run(scenario())
    return app


def _visible(picker: Any) -> str:
    return picker.pick_list.render().plain


# --- formatting -------------------------------------------------------------------------


def test_formatting_helpers() -> None:
    assert format_tokens(200_000) == "200k"
    assert format_tokens(1_048_576) == "1M"
    assert format_tokens(1_500_000) == "1.5M"
    assert format_tokens(512) == "512"
    models = make_models()
    assert format_price(models[0]) == "$3/$15"
    assert format_price(models[3]) == "$0.25/$2"
    assert format_price(models[5]) == "—"
    assert relative_time(NOW_MS - 10_000, NOW_S) == "just now"
    assert relative_time(NOW_MS - 3 * 60_000, NOW_S) == "3 min ago"
    assert relative_time(NOW_MS - 3_600_000, NOW_S) == "1 hour ago"
    assert relative_time(NOW_MS - 5 * 3_600_000, NOW_S) == "5 hours ago"
    assert relative_time(NOW_MS - 30 * 3_600_000, NOW_S) == "yesterday"
    assert relative_time(NOW_MS - 10 * 86_400_000, NOW_S) == "10 days ago"
    assert relative_time(NOW_MS - 400 * 86_400_000, NOW_S) == "1 year ago"
    assert format_size(900) == "900 B"
    assert format_size(1536) == "1.5 KB"
    assert format_size(20 * 1024) == "20 KB"
    assert format_size(3 * 1024 * 1024) == "3.0 MB"


# --- model picker -------------------------------------------------------------------------


def test_model_picker_highlights_current_and_filters_fuzzily() -> None:
    models = make_models()

    async def body(app: ScreenHost, picker: ModelPicker, pilot: Any) -> None:
        assert picker.highlighted_item is models[2]
        rows = _visible(picker).splitlines()
        assert len(rows) == len(models)
        current_row = next(row for row in rows if "openai/gpt-5 " in row)
        assert "●" in current_row and "400k" in current_row and "$1.25/$10" in current_row
        assert "1M" in next(row for row in rows if "gemini" in row)
        await pilot.press(*"gpt5mini")
        assert picker.matches[0].id == "gpt-5-mini"
        assert picker.highlighted_item is models[3]
        await pilot.press("enter")

    app = _drive(lambda: ModelPicker(models, models[2]), body)
    assert app.results == [models[3]]


def test_model_picker_matches_provider_and_name_and_says_when_nothing_does() -> None:
    models = make_models()

    async def body(app: ScreenHost, picker: ModelPicker, pilot: Any) -> None:
        await pilot.press(*"google")
        assert [m.provider for m in picker.matches] == ["google"]
        for _ in "google":
            await pilot.press("backspace")
        await pilot.press(*"haiku")
        assert [m.id for m in picker.matches] == ["claude-haiku-4-5"]
        await pilot.press(*"zzz")
        assert picker.matches == []
        assert "No model matches" in _visible(picker)
        await pilot.press("enter")  # nothing to pick: stays open
        assert app.results == []
        await pilot.press("escape")

    app = _drive(lambda: ModelPicker(models, models[0]), body)
    assert app.results == [None]


def test_model_picker_arrow_keys_move_the_highlight() -> None:
    models = make_models()

    async def body(app: ScreenHost, picker: ModelPicker, pilot: Any) -> None:
        await pilot.press("down", "down", "up")
        assert picker.highlighted_item is models[1]
        await pilot.press("ctrl+end")
        assert picker.highlighted_item is models[-1]
        await pilot.press("enter")

    app = _drive(lambda: ModelPicker(models, models[0]), body)
    assert app.results == [models[-1]]


# --- session picker -----------------------------------------------------------------------


def _sessions(here: Path, there: Path) -> list[SessionSummary]:
    return [
        summary(0, here, name="Fix the parser", first="the parser crashes on torn lines"),
        summary(1, there, first="add a dark theme"),
        summary(2, here, first="write the export to HTML"),
        summary(3, there, name="Benchmarks", first="time the session picker"),
    ]


def _session_picker(store: Any, cwd: Path) -> SessionPicker:
    return SessionPicker(store, cwd, now=lambda: NOW_S, home=Path("/home/me"))


def test_session_picker_lists_this_folder_then_all_with_tab() -> None:
    here, there = Path("/home/me/here"), Path("/home/me/there")
    store = FakeStore(_sessions(here, there))

    async def body(app: ScreenHost, picker: SessionPicker, pilot: Any) -> None:
        await wait_until(pilot, lambda: not picker.is_loading, what="listing")
        assert [s.id for s in picker.matches] == [f"{0:032x}", f"{2:032x}"]
        rows = _visible(picker).splitlines()
        assert "3 min ago" in rows[0] and "1 msg " in rows[0] and "2.0 KB" in rows[0]
        assert "Fix the parser" in rows[0] and "~/there" not in _visible(picker)
        assert "this folder · 2" in screen_text(app)

        await pilot.press("tab")
        await wait_until(pilot, lambda: not picker.is_loading, what="listing all")
        assert len(picker.matches) == 4
        assert "~/there" in _visible(picker) and "~/here" in _visible(picker)
        assert "all folders · 4" in screen_text(app)

        await pilot.press("tab")
        assert len(picker.matches) == 2
        assert store.calls == [here, None]  # each scope listed once
        assert all(name != threading.main_thread().name for name in store.threads)

    _drive(lambda: _session_picker(store, here), body)


def test_session_picker_filters_names_and_first_messages_and_returns_the_summary() -> None:
    here, there = Path("/home/me/here"), Path("/home/me/there")
    sessions = _sessions(here, there)
    store = FakeStore(sessions)

    async def body(app: ScreenHost, picker: SessionPicker, pilot: Any) -> None:
        await wait_until(pilot, lambda: not picker.is_loading)
        await pilot.press("tab")
        await wait_until(pilot, lambda: not picker.is_loading)
        await pilot.press(*"the")
        assert len(picker.matches) == 4
        await pilot.press(*" session")  # both words must appear
        assert [s.name for s in picker.matches] == ["Benchmarks"]
        assert "1 of 4" in screen_text(app)
        await pilot.press("enter")

    app = _drive(lambda: _session_picker(store, here), body)
    assert app.results == [sessions[3]]


def test_a_slow_listing_shows_loading_then_the_rows() -> None:
    here = Path("/home/me/here")
    gate = threading.Event()
    store = FakeStore([summary(0, here), summary(1, here)], gate=gate)

    async def body(app: ScreenHost, picker: SessionPicker, pilot: Any) -> None:
        assert picker.is_loading
        assert _visible(picker) == "Loading sessions…"
        await pilot.press(*"message 1")  # typing while it loads is kept
        gate.set()
        await wait_until(pilot, lambda: not picker.is_loading, what="listing")
        assert [s.id for s in picker.matches] == [f"{1:032x}"]
        await pilot.press("enter")

    app = _drive(lambda: _session_picker(store, here), body)
    assert app.results == [store.sessions[1]]


def test_session_picker_escape_cancels_and_errors_are_shown() -> None:
    store = FakeStore([], fail="permission denied")

    async def body(app: ScreenHost, picker: SessionPicker, pilot: Any) -> None:
        await wait_until(pilot, lambda: not picker.is_loading)
        assert "Could not list sessions: OSError: permission denied" in _visible(picker)
        await pilot.press("escape")

    app = _drive(lambda: _session_picker(store, Path("/x")), body)
    assert app.results == [None]


def test_session_picker_on_a_real_store(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    cwd = tmp_path / "project"
    for text in ("first task", "second task"):
        session = store.create(cwd)
        session.append_message(UserMessage(text))
        session.close()
    # A subagent's transcript is not a conversation to resume: it is not listed.
    child = store.create(cwd, subagent_of=session.id)
    child.append_message(UserMessage("a task's prompt"))
    child.close()
    other = store.create(tmp_path / "elsewhere")
    other.append_message(UserMessage("elsewhere task"))
    other.close()

    async def body(app: ScreenHost, picker: SessionPicker, pilot: Any) -> None:
        await wait_until(pilot, lambda: not picker.is_loading)
        assert sorted(s.first_message or "" for s in picker.matches) == [
            "first task",
            "second task",
        ]
        await pilot.press(*"second", "enter")

    app = _drive(lambda: SessionPicker(store, cwd), body)
    (chosen,) = app.results
    assert chosen.first_message == "second task"
    assert chosen.path.is_file()


def test_session_picker_pages_through_a_thousand_sessions() -> None:
    here = Path("/home/me/here")
    store = FakeStore([summary(i, here) for i in range(1000)])

    async def body(app: ScreenHost, picker: SessionPicker, pilot: Any) -> None:
        await wait_until(pilot, lambda: not picker.is_loading)
        shown = _visible(picker).splitlines()
        assert len(shown) == picker.pick_list.max_rows  # only what fits is drawn
        await pilot.press("pagedown", "pagedown")
        assert picker.pick_list.cursor == 2 * (picker.pick_list.size.height - 1)
        await pilot.press("ctrl+end")
        assert picker.highlighted_item is store.sessions[-1]
        assert "message 999" in _visible(picker).splitlines()[-1]
        await pilot.press("enter")

    app = _drive(lambda: _session_picker(store, here), body)
    assert app.results == [store.sessions[-1]]


# --- fork picker --------------------------------------------------------------------------


def test_fork_picker_lists_newest_first_and_returns_the_entry_id() -> None:
    entries = [("e1", "first question"), ("e2", "second\nquestion"), ("e3", "third one")]

    async def body(app: ScreenHost, picker: ForkPicker, pilot: Any) -> None:
        rows = _visible(picker).splitlines()
        assert [row.split()[0] for row in rows] == ["3", "2", "1"]
        assert "second question" in rows[1]  # one line per message
        assert picker.highlighted_item == ("e3", "third one")
        await pilot.press(*"question", "down")
        assert picker.highlighted_item == ("e1", "first question")
        await pilot.press("enter")

    app = _drive(lambda: ForkPicker(entries), body)
    assert app.results == ["e1"]


def test_fork_picker_without_messages_says_so_and_escape_cancels() -> None:
    async def body(app: ScreenHost, picker: ForkPicker, pilot: Any) -> None:
        assert "No messages to fork from yet" in _visible(picker)
        await pilot.press("enter", "escape")

    app = _drive(lambda: ForkPicker([]), body)
    assert app.results == [None]


# --- theme picker -------------------------------------------------------------------------


@pytest.mark.parametrize("finish", ["enter", "escape"])
def test_theme_picker_previews_live_and_restores_on_escape(finish: str) -> None:
    previews: list[str] = []

    async def body(app: ScreenHost, picker: ThemePicker, pilot: Any) -> None:
        assert picker.highlighted_item == "dark"
        assert previews == []  # opening does not re-apply the current theme
        await pilot.press("down")
        assert previews == ["light"]
        await pilot.press("down")
        assert previews == ["light", "ansi"]
        await pilot.press(finish)

    app = _drive(lambda: ThemePicker(["dark", "light", "ansi"], "dark", previews.append), body)
    if finish == "enter":
        assert app.results == ["ansi"]
        assert previews == ["light", "ansi"]
    else:
        assert app.results == [None]
        assert previews == ["light", "ansi", "dark"]


def test_theme_picker_filter_previews_the_best_match() -> None:
    previews: list[str] = []

    async def body(app: ScreenHost, picker: ThemePicker, pilot: Any) -> None:
        await pilot.press(*"lig")
        assert picker.matches == ["light"]
        assert previews == ["light"]
        await pilot.press("enter")

    app = _drive(lambda: ThemePicker(["dark", "light", "ansi"], "dark", previews.append), body)
    assert app.results == ["light"]


def test_model_picker_puts_an_aliases_model_first_and_enter_takes_it() -> None:
    models = make_models()
    aliases = {"gpt": "openai/gpt-5-mini", "fast": "local/qwen3-coder"}

    async def body(app: ScreenHost, picker: ModelPicker, pilot: Any) -> None:
        await pilot.press(*"fast")
        assert picker.matches[0].ref == "local/qwen3-coder"  # no fuzzy match at all
        for _ in "fast":
            await pilot.press("backspace")
        await pilot.press(*"GPT")
        assert picker.matches[0].ref == "openai/gpt-5-mini"
        assert [m.ref for m in picker.matches].count("openai/gpt-5-mini") == 1
        await pilot.press("enter")

    app = _drive(lambda: ModelPicker(models, models[0], aliases=aliases), body)
    assert app.results == [models[3]]
