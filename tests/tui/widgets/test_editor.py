"""The prompt editor on its own, and a 1 MB paste end to end."""

from __future__ import annotations

from typing import Any

import pytest
from textual import events
from textual.app import App, ComposeResult

from picode.ai.providers.faux import text_turn
from picode.ai.types import UserMessage
from picode.tui.widgets import editor as editor_module
from picode.tui.widgets.editor import PromptEditor
from picode.tui.widgets.messages import UserMessageView
from picode.tui.widgets.pacing import TICK_POINTS
from tests.tui.beat import RecordedBeat
from tests.tui.conftest import SIZE, TuiHarness, run, type_text, wait_until


class EditorApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.editor = PromptEditor()
        self.sent: list[tuple[str, bool]] = []

    def compose(self) -> ComposeResult:
        yield self.editor

    def on_prompt_editor_submitted(self, message: PromptEditor.Submitted) -> None:
        self.sent.append((message.text, message.follow_up))


def _with_editor(body: Any) -> None:
    app = EditorApp()

    async def scenario() -> None:
        async with app.run_test(size=(80, 20)) as pilot:
            await body(app, pilot)

    run(scenario())


def test_enter_sends_and_clears() -> None:
    async def body(app: EditorApp, pilot: Any) -> None:
        await type_text(pilot, "hello")
        await pilot.press("enter")
        assert app.sent == [("hello", False)]
        assert app.editor.text == ""
        await pilot.press("enter")  # nothing to send
        assert app.sent == [("hello", False)]

    _with_editor(body)


def test_alt_enter_sends_as_follow_up() -> None:
    async def body(app: EditorApp, pilot: Any) -> None:
        await type_text(pilot, "later")
        await pilot.press("alt+enter")
        assert app.sent == [("later", True)]

    _with_editor(body)


def test_shift_enter_and_ctrl_j_insert_newlines() -> None:
    async def body(app: EditorApp, pilot: Any) -> None:
        await type_text(pilot, "a")
        await pilot.press("shift+enter")
        await type_text(pilot, "b")
        await pilot.press("ctrl+j")
        await type_text(pilot, "c")
        assert app.editor.text == "a\nb\nc"
        assert app.sent == []

    _with_editor(body)


def test_up_and_down_recall_history_at_the_edges() -> None:
    async def body(app: EditorApp, pilot: Any) -> None:
        for text in ("first", "second"):
            await type_text(pilot, text)
            await pilot.press("enter")
        await type_text(pilot, "draft")
        await pilot.press("up")
        assert app.editor.text == "second"
        await pilot.press("up")
        assert app.editor.text == "first"
        await pilot.press("up")  # the oldest entry stays
        assert app.editor.text == "first"
        await pilot.press("down")
        assert app.editor.text == "second"
        await pilot.press("down")
        assert app.editor.text == "draft"

    _with_editor(body)


def test_up_inside_multi_line_text_moves_the_cursor_first() -> None:
    async def body(app: EditorApp, pilot: Any) -> None:
        await type_text(pilot, "old")
        await pilot.press("enter")
        app.editor.set_text("line one\nline two")
        await pilot.press("up")
        assert app.editor.text == "line one\nline two"
        assert app.editor.cursor_location[0] == 0
        await pilot.press("up")
        assert app.editor.text == "old"

    _with_editor(body)


def test_small_paste_is_inserted_as_text_and_large_paste_as_a_placeholder() -> None:
    async def body(app: EditorApp, pilot: Any) -> None:
        app.post_message(events.Paste("small\ntext"))
        await pilot.pause()
        assert app.editor.text == "small\ntext"
        big = "x\n" * 100
        app.post_message(events.Paste(big))
        await pilot.pause()
        assert "[pasted text #1: 101 lines, 200 bytes]" in app.editor.text
        await pilot.press("enter")
        assert app.sent == [("small\ntext" + big, False)]
        # Recalled from history, the placeholder still stands for the paste.
        await pilot.press("up")
        await pilot.press("enter")
        assert app.sent[-1] == ("small\ntext" + big, False)

    _with_editor(body)


def test_a_one_megabyte_paste_is_sent_whole(tui: TuiHarness) -> None:
    line = "0123456789 pasted text with unicode: 日本語 — ✓\n"
    big = line * (1_048_576 // len(line) + 1)
    faux = tui.faux(text_turn("got it"))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None)
            app.post_message(events.Paste(big))
            await wait_until(pilot, lambda: app.editor.expanded_text() == big, what="paste")
            assert app.editor.text.startswith("[pasted text #1: ")  # one line, not 20k
            await pilot.press("enter")
            await wait_until(pilot, lambda: faux.requests, timeout=20, what="request")
            sent = faux.requests[0].messages[-1]
            assert isinstance(sent, UserMessage) and sent.text == big
            view = app.query_one(UserMessageView)
            assert view.text == big
            shown = view.render().plain  # the transcript shows the start, not all of it
            assert len(shown) < 10_000 and "more lines" in shown

    run(scenario())


def test_cr_and_crlf_line_breaks_in_pastes_become_lf_with_the_right_line_count(
    tui: TuiHarness,
) -> None:
    faux = tui.faux(text_turn("got it"))
    app = tui.app(faux)
    small = "one\rtwo\r\nthree"
    big_lines = [f"line {n}" for n in range(14_000)]

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None)
            app.post_message(events.Paste(small))
            await wait_until(pilot, lambda: app.editor.text == "one\ntwo\nthree", what="small")
            app.post_message(events.Paste("\r" + "\r".join(big_lines)))
            await wait_until(pilot, lambda: "[pasted text #1" in app.editor.text, what="paste")
            assert "[pasted text #1: 14,001 lines, " in app.editor.text
            await pilot.press("enter")
            await wait_until(pilot, lambda: faux.requests, timeout=20, what="request")
            sent = faux.requests[0].messages[-1]
            assert isinstance(sent, UserMessage)
            assert sent.text == "one\ntwo\nthree\n" + "\n".join(big_lines)
            assert "\r" not in sent.text

    run(scenario())


def test_the_cursor_stops_blinking_when_idle_and_starts_again_on_a_key() -> None:
    """An idle editor must not wake picode twice a second (docs/benchmarks.md, idle CPU)."""
    from picode.tui.widgets.editor import BLINK_FOR_S

    async def body(app: EditorApp, pilot: Any) -> None:
        editor = app.editor
        now = [1000.0]
        editor.clock = lambda: now[0]
        await type_text(pilot, "a")
        assert editor.blink_timer._active.is_set()  # blinking while typing
        now[0] += BLINK_FOR_S
        editor._toggle_cursor_blink_visible()  # the blink timer's next tick
        assert not editor.blink_timer._active.is_set()
        assert editor._cursor_visible  # it stays on, not off
        await type_text(pilot, "b")
        assert editor.blink_timer._active.is_set()

    _with_editor(body)


def test_a_blink_is_drawn_on_the_beat_with_the_spinner_and_a_key_cancels_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A toggle of the cursor waits for the spinner's next tick (pacing.py) instead of
    costing a frame of its own; a key shows the cursor, and no toggle timed before hides it."""
    beat = RecordedBeat()
    monkeypatch.setattr(editor_module, "on_beat", beat)

    async def body(app: EditorApp, pilot: Any) -> None:
        editor = app.editor
        await type_text(pilot, "a")
        visible = editor._cursor_visible
        editor._toggle_cursor_blink_visible()  # the blink timer's tick
        editor._toggle_cursor_blink_visible()  # a second one before the point: no second toggle
        assert editor._cursor_visible == visible  # not yet: it waits for the point
        (point,) = beat.points()
        assert point % TICK_POINTS == 0
        assert beat.fire() == 1
        assert editor._cursor_visible != visible
        editor._toggle_cursor_blink_visible()
        assert len(beat.points()) == 1
        await type_text(pilot, "b")
        assert beat.points() == []  # the key dropped it
        assert editor._cursor_visible

    _with_editor(body)
