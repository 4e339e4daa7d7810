"""Folding: in a long conversation only the last few screens of entries are laid out."""

from __future__ import annotations

from typing import Any

from picode.ai.providers.faux import text_turn
from picode.ai.types import AssistantMessage, TextContent
from picode.tui.widgets.markdown import MarkdownView, StreamingMarkdown
from picode.tui.widgets.messages import UserMessageView
from picode.tui.widgets.transcript import DEFAULT_SHOWN_SCREENS
from tests.tui.conftest import SIZE, TuiHarness, opened, run, send, wait_until

TALL = "\n\n".join(f"line {k}" for k in range(20))  # about 40 rows: over a screen


async def _converse(app: Any, pilot: Any, exchanges: int, first: int = 0) -> None:
    for n in range(first, first + exchanges):
        count = len(app.session.messages)
        await send(pilot, f"prompt {n}")
        await wait_until(
            pilot,
            lambda c=count: len(app.session.messages) == c + 2 and not app.session.is_running,
            what=f"reply {n}",
        )
    await pilot.pause()


def _shown(transcript: Any) -> list[Any]:
    return [w for w in transcript.entries if w.display]


def _first_user_text(transcript: Any) -> str:
    first = next(w for w in _shown(transcript) if isinstance(w, UserMessageView))
    return str(first.text)


def _app(tui: TuiHarness, exchanges: int) -> Any:
    return tui.app(tui.faux(*(text_turn(f"reply {n}\n\n{TALL}") for n in range(exchanges))))


def test_following_the_bottom_folds_entries_beyond_a_few_screens(tui: TuiHarness) -> None:
    app = _app(tui, 8)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            transcript = app.transcript
            await _converse(app, pilot, 8)
            await wait_until(pilot, lambda: transcript.folded > 0, what="a fold")
            entries = list(transcript.entries)
            assert not any(w.display for w in entries[: transcript.folded])
            shown = entries[transcript.folded :]
            assert all(w.display for w in shown)
            keep = DEFAULT_SHOWN_SCREENS * transcript.scrollable_content_region.height
            heights = [w.outer_size.height for w in shown]
            # Enough for the screens kept, and not one entry more.
            assert sum(heights) >= keep > sum(heights[1:])
            assert transcript.scroll_y == transcript.max_scroll_y  # still at the bottom
            index = transcript.index_of(shown[0])
            assert index is not None and transcript.earlier == index
            row = str(transcript.query_one("#hidden-count").render())
            assert f"↑ {index} earlier messages — scroll up to load" in row

    run(scenario())


def test_scrolling_up_shows_folded_entries_without_moving_the_view(tui: TuiHarness) -> None:
    app = _app(tui, 8)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            transcript = app.transcript
            await _converse(app, pilot, 8)
            await wait_until(pilot, lambda: transcript.folded > 0, what="a fold")
            folded = transcript.folded
            top = transcript.entries[folded]
            transcript.scroll_home(animate=False)
            await pilot.pause()
            on_screen = top.virtual_region.y - transcript.scroll_y
            await wait_until(pilot, lambda: transcript.folded < folded, what="entries shown")
            await wait_until(pilot, lambda: not transcript.loading_page, what="settled")
            assert top.virtual_region.y - transcript.scroll_y == on_screen
            assert transcript.scroll_y > 0  # the shown entries are above the view
            for _ in range(4):
                if transcript.earlier == 0:
                    break
                transcript.scroll_home(animate=False)
                await wait_until(pilot, lambda: transcript.loading_page, what="a page")
                await wait_until(pilot, lambda: not transcript.loading_page, what="settled")
            assert transcript.folded == 0 and transcript.earlier == 0
            assert _first_user_text(transcript) == "prompt 0"
            assert not transcript.query_one("#hidden-count").display

    run(scenario())


def test_nothing_folds_while_the_person_reads_above_the_bottom(tui: TuiHarness) -> None:
    app = _app(tui, 9)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            transcript = app.transcript
            await _converse(app, pilot, 8)
            await wait_until(pilot, lambda: transcript.folded > 0, what="a fold")
            await pilot.press("pageup")
            await wait_until(pilot, lambda: transcript.scroll_y < transcript.max_scroll_y)
            folded = transcript.folded
            reading = [w for w in transcript.entries if w.display]
            # Entries that arrive without a prompt sent (which goes back to the bottom).
            for n in range(3):
                app.report(f"note {n}\n\n{TALL}")
            await wait_until(pilot, lambda: len(transcript.entries) == len(reading) + folded + 3)
            await pilot.pause()
            assert transcript.folded == folded
            assert all(w.display for w in reading)

            await _converse(app, pilot, 1, first=8)  # sent: back at the bottom
            await wait_until(pilot, lambda: transcript.folded > folded, what="a fold again")

    run(scenario())


MARKDOWN = "## Heading\n\nSome **bold** text and `code`.\n\n- one\n- two\n\n" + TALL


def test_folded_replies_keep_their_source_not_their_drawing(tui: TuiHarness) -> None:
    app = tui.app(tui.faux(*(text_turn(f"reply {n}\n\n{MARKDOWN}") for n in range(8))))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            transcript = app.transcript
            await _converse(app, pilot, 8)
            await wait_until(pilot, lambda: transcript.folded > 1, what="a fold")
            folded = list(transcript.entries)[: transcript.folded]
            views = [view for entry in folded for view in entry.query(MarkdownView)]
            assert views
            for view in views:
                assert view.source.startswith("reply ")  # what draws it again
                assert not view.holds_rendering
            for entry in folded:
                for node in entry.walk_children(with_self=True):
                    assert not node._styles_cache._cache  # no styled lines kept either
            shown = [w for w in transcript.entries if w.display]
            assert any(v.holds_rendering for w in shown for v in w.query(MarkdownView))

            # Shown again, a reply draws the same lines as one never folded, as many as the
            # height it was measured at.
            transcript.unfold_all()
            await pilot.pause()
            height = views[0].size.height
            lines = [line.body.plain for line in views[0].lines]
            assert views[0].holds_rendering
            fresh = MarkdownView(views[0].source)
            assert lines == [line.body.plain for line in _lines_at(fresh, views[0].size.width)]
            assert len(lines) == height

    run(scenario())


def test_a_finished_reply_shares_its_text_and_the_parser(tui: TuiHarness) -> None:
    app = _app(tui, 2)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await _converse(app, pilot, 2)
            views = list(app.transcript.query(StreamingMarkdown))
            assert len(views) == 2
            messages = [m for m in app.session.messages if isinstance(m, AssistantMessage)]
            for view, message in zip(views, messages, strict=True):
                block = message.content[0]
                assert isinstance(block, TextContent)
                assert view.source is block.text  # one string, not an equal copy
            assert views[0]._parser is views[1]._parser

    run(scenario())


def _lines_at(view: MarkdownView, width: int) -> list[Any]:
    view._layout(width)
    return view._lines
