"""What the terminal's scrollback gave and the alternate screen took: a row saying that new
output arrived below the view, a key to jump to the end, and search in the transcript."""

from __future__ import annotations

from typing import Any

from picode.ai.providers.faux import FauxText, FauxThinking, FauxTurn, text_turn
from picode.tui.app import PicodeApp
from picode.tui.widgets.markdown import MarkdownView
from tests.tui.conftest import SIZE, TuiHarness, open_session, press_now, run, send, wait_until

LONG = "\n\n".join(f"Paragraph {n} of the first answer." for n in range(1, 41))
STREAMED = " ".join(f"word{n}" for n in range(400))
HAYSTACK = "\n\n".join(
    f"Line {n}: {'the needle is here' if n in (3, 20, 22, 37) else 'only hay'}."
    for n in range(1, 41)
)


def _idle(app: PicodeApp) -> bool:
    return app.session is not None and not app.session.is_running


def test_new_output_below_the_view_is_announced_and_ctrl_end_jumps_to_it(
    tui: TuiHarness,
) -> None:
    faux = tui.faux(
        FauxTurn([FauxThinking("Thinking it over.\n" * 8), FauxText(LONG)]),
        FauxTurn([FauxText(STREAMED)], chunk_size=24, delay=0.03),
    )
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await open_session(pilot)
            below, transcript = app.output_below, app.transcript
            await send(pilot, "first")
            await wait_until(pilot, lambda: _idle(app) and app.session.messages, what="idle")
            await pilot.pause()
            # Scrolled up with nothing arriving: nothing to announce.
            press_now(app, "pageup")
            await wait_until(pilot, lambda: not transcript.at_bottom, what="scrolled up")
            await pilot.pause(0.1)
            assert not below.display
            # Nor when what is there unfolds (ctrl+t folds the thinking, then unfolds it).
            press_now(app, "ctrl+t")
            await pilot.pause(0.1)
            press_now(app, "ctrl+t")
            await wait_until(pilot, lambda: not transcript.thinking_collapsed, what="unfolded")
            await pilot.pause(0.1)
            assert not below.display
            # Streaming while it follows the bottom: nothing to announce either.
            await send(pilot, "second")
            await wait_until(pilot, lambda: "word3" in _last_source(app), what="streaming")
            assert transcript.at_bottom and not below.display
            press_now(app, "pageup", "pageup")
            await wait_until(pilot, lambda: below.display, what="the row")
            assert "New output below" in str(below.render()) and "ctrl+end" in str(below.render())
            assert not transcript.at_bottom
            press_now(app, "ctrl+end")
            await wait_until(pilot, lambda: not below.display, what="the row to go")
            await wait_until(pilot, lambda: transcript.at_bottom, what="the bottom")
            await wait_until(pilot, lambda: _idle(app), what="the end of the reply")
            await pilot.pause()
            assert transcript.at_bottom  # it follows again
            assert not below.display

    run(scenario())


def _last_source(app: PicodeApp) -> str:
    views = list(app.query(MarkdownView))
    return views[-1].source if views else ""


def _style_at_text(app: PicodeApp, text: str, nth: int = 0) -> Any:
    """The style the screen draws the first character of the ``nth`` visible ``text`` in."""
    lines = [strip.text for strip in app.screen._compositor.render_strips()]
    seen = 0
    for y, line in enumerate(lines):
        x = line.find(text)
        if x >= 0:
            if seen == nth:
                style = app.screen.get_style_at(x, y)
                return (style.color, style.bgcolor, style.bold, style.reverse)
            seen += 1
    raise AssertionError(f"{text!r} is not on the screen")


def _count(app: PicodeApp, text: str) -> int:
    return sum(text in strip.text for strip in app.screen._compositor.render_strips())


def test_ctrl_f_searches_the_transcript_highlights_and_steps_between_matches(
    tui: TuiHarness,
) -> None:
    app = tui.app(tui.faux(text_turn(HAYSTACK), text_turn("the needle again, last.")))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await open_session(pilot)
            await send(pilot, "find it")
            await wait_until(pilot, lambda: _idle(app) and app.session.messages, what="idle")
            transcript = app.transcript
            plain = _style_at_text(app, "only hay")
            press_now(app, "ctrl+f")
            await wait_until(pilot, app.search.is_open, what="the search field")
            await wait_until(pilot, lambda: app.search.bar.input.has_focus, what="its focus")
            await pilot.press(*"NEEDLE")  # case does not matter
            search = app.search
            await wait_until(pilot, lambda: len(search.matches) == 4, what="four matches")
            # Starts at the match nearest the bottom of the view, as a terminal's search does.
            assert search.current == 3
            assert "4 of 4" in str(search.bar.count.render())
            current = _style_at_text(app, "needle is here")
            assert current[2] and current != plain  # bold, in the current match's colours
            await pilot.press("enter")  # the one above
            await wait_until(pilot, lambda: search.current == 2, what="the third match")
            await pilot.press("enter", "enter")
            await wait_until(pilot, lambda: search.current == 0, what="the first match")
            first = search.matches[0]
            top = round(transcript.scroll_y)
            assert top <= first.y < top + transcript.scrollable_content_region.height
            assert "Line 3:" in first.text
            await pilot.press("down")
            await wait_until(pilot, lambda: search.current == 1, what="back to the second")
            await pilot.press("up", "up")  # past the first: round to the newest
            await wait_until(pilot, lambda: search.current == 3, what="wrapped around")
            # A match that is not the current one is marked too; other text is not.
            await pilot.press("enter")
            await wait_until(pilot, lambda: search.current == 2, what="the third again")
            await pilot.pause()
            assert _style_at_text(app, "only hay") == plain
            marks = [_style_at_text(app, "needle is here", n) for n in range(_count(app, "needle"))]
            assert any(style[3] for style in marks)  # reverse: a match, not the current one
            assert sum(1 for style in marks if style[2]) == 1  # bold: the current one only
            # Esc closes the field and its marks; nothing is interrupted, the editor is back.
            await pilot.press("escape")
            await wait_until(pilot, lambda: not search.is_open(), what="closed")
            await pilot.pause()
            assert _style_at_text(app, "needle is here") == plain
            assert app.editor.has_focus

    run(scenario())


def test_a_search_with_no_match_says_so(tui: TuiHarness) -> None:
    app = tui.app(tui.faux(text_turn("Nothing to see.")))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await open_session(pilot)
            await send(pilot, "hello")
            await wait_until(pilot, lambda: _idle(app) and app.session.messages, what="idle")
            press_now(app, "ctrl+f")
            await wait_until(pilot, app.search.is_open, what="the search field")
            await wait_until(pilot, lambda: app.search.bar.input.has_focus, what="its focus")
            await pilot.press(*"zebra")
            await wait_until(
                pilot, lambda: "no matches" in str(app.search.bar.count.render()), what="none"
            )
            assert app.search.current is None

    run(scenario())


def test_ctrl_c_and_ctrl_d_in_the_search_field_edit_the_query_and_never_quit(
    tui: TuiHarness,
) -> None:
    app = tui.app(tui.faux(text_turn("Nothing to see.")))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await open_session(pilot)
            assert app.editor.is_empty
            press_now(app, "ctrl+f")
            await wait_until(pilot, lambda: app.search.has_focus(), what="the search field")
            await pilot.press(*"zeb", "home", "ctrl+d", "ctrl+d", "ctrl+c", "ctrl+c")
            await pilot.pause(0.05)
            assert app.is_running
            assert app.search.bar.input.value == "b"

    run(scenario())
