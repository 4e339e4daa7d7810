"""A long session in the real app: the tail first, earlier messages as you scroll up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from picode.ai.providers.faux import text_turn
from picode.ai.types import AssistantMessage, TextContent, UserMessage
from picode.session.store.sessions import SessionStore
from picode.tui.controllers.history import PAGE_SIZE, TAIL_SIZE
from picode.tui.widgets.messages import AssistantMessageView, UserMessageView
from tests.tui.conftest import SIZE, TuiHarness, opened, run, send, wait_until


def _long_session(tui: TuiHarness, exchanges: int) -> Path:
    store = SessionStore(tui.paths.sessions_dir)
    session = store.create(tui.cwd)
    for n in range(exchanges):
        session.append_message(UserMessage(f"question {n}"))
        session.append_message(
            AssistantMessage([TextContent(f"answer {n}")], api="x", provider="x", model="x")
        )
    session.close()
    return session.path


def _first_user_text(app: Any) -> str:
    first = next(w for w in app.transcript.entries if isinstance(w, UserMessageView))
    return str(first.text)


def _earlier_row(app: Any) -> str:
    return str(app.transcript.query_one("#hidden-count").render())


def test_resume_renders_the_tail_and_loads_earlier_pages_on_scrolling_up(tui: TuiHarness) -> None:
    exchanges = (TAIL_SIZE + 2 * PAGE_SIZE) // 2  # the tail and two pages
    path = _long_session(tui, exchanges)
    app = tui.app(tui.faux(), options={"session": path})

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            transcript = app.transcript
            total = exchanges * 2
            await wait_until(pilot, lambda: transcript.older == total - TAIL_SIZE)
            assert len(transcript.entries) == TAIL_SIZE + 1  # and the welcome line
            await wait_until(pilot, lambda: transcript.entries[-1].is_mounted)
            assert f"↑ {total - TAIL_SIZE} earlier messages — scroll up to load" in _earlier_row(
                app
            )
            assert _first_user_text(app) == f"question {(total - TAIL_SIZE) // 2}"
            assert transcript.scroll_y > 0 and not transcript.earlier_row_visible()
            oldest = next(w for w in transcript.entries if isinstance(w, UserMessageView))
            oldest_y = oldest.virtual_region.y  # its row on screen once scrolled to the top

            transcript.scroll_home(animate=False)
            older = total - TAIL_SIZE - PAGE_SIZE
            await wait_until(pilot, lambda: transcript.older == older, what="the first page")
            await wait_until(pilot, lambda: not transcript.loading_page, what="the page settled")
            assert _first_user_text(app) == f"question {older // 2}"
            # The message that was at the top stays where it was on screen: no jump.
            assert not transcript.earlier_row_visible()
            assert oldest.virtual_region.y - transcript.scroll_y == oldest_y

            transcript.scroll_home(animate=False)
            await wait_until(pilot, lambda: transcript.older == 0, what="the last page")
            await wait_until(pilot, lambda: _first_user_text(app) == "question 0")
            await wait_until(pilot, lambda: not transcript.query_one("#hidden-count").display)
            texts = [
                w.text if isinstance(w, UserMessageView) else "answer"
                for w in transcript.entries
                if isinstance(w, UserMessageView | AssistantMessageView)
            ]
            assert texts[:4] == ["question 0", "answer", "question 1", "answer"]
            assert len(texts) == total

    run(scenario())


def test_messages_pruned_during_a_conversation_can_be_scrolled_back(tui: TuiHarness) -> None:
    tall = "\n\n".join(f"line {k}" for k in range(20))  # taller than the screen
    faux = tui.faux(*(text_turn(f"reply {n}\n\n{tall}") for n in range(5)))
    app = tui.app(faux, max_entries=4)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            transcript = app.transcript
            for n in range(5):
                count = len(app.session.messages)
                await send(pilot, f"prompt {n}")
                await wait_until(
                    pilot,
                    lambda c=count: (
                        len(app.session.messages) == c + 2 and not app.session.is_running
                    ),
                )
            # 10 messages; 4 entries mounted (prompt 3 … reply 4): 6 earlier ones.
            assert transcript.older == 6
            assert _first_user_text(app) == "prompt 3"
            # Each scroll to the top shows one page more: the folded entries, then the
            # unmounted messages rebuilt.
            for _ in range(4):
                if transcript.earlier == 0:
                    break
                transcript.scroll_home(animate=False)
                await wait_until(pilot, lambda: transcript.loading_page, what="a page shown")
                await wait_until(pilot, lambda: not transcript.loading_page, what="it settled")
            assert transcript.older == 0 and transcript.folded == 0
            await wait_until(pilot, lambda: _first_user_text(app) == "prompt 0")

    run(scenario())
