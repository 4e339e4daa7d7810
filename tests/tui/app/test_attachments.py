"""``@path`` in the editor attaches the file, as on the command line, and says so."""

from __future__ import annotations

from picode.ai.providers.faux import FauxTurn, text_turn
from picode.ai.types import ImageContent, TextContent, UserMessage
from picode.tui.widgets.messages import UserMessageView
from tests.tui.conftest import SIZE, TuiHarness, has_notice, open_session, run, send, wait_until

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


def _sent_user_message(faux: object) -> UserMessage:
    request = faux.last_request  # type: ignore[attr-defined]
    return next(m for m in reversed(request.messages) if isinstance(m, UserMessage))


def test_a_mentioned_file_is_sent_and_shown_as_attached(tui: TuiHarness) -> None:
    (tui.cwd / "notes.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    (tui.cwd / "shot.png").write_bytes(PNG)
    faux = tui.faux(text_turn("seen"))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None)
            await send(pilot, "summarise @notes.txt and @shot.png please")
            await wait_until(pilot, lambda: faux.requests, what="the request")
            content = _sent_user_message(faux).content
            assert isinstance(content, list)
            assert isinstance(content[0], TextContent)
            assert content[0].text == "summarise @notes.txt and @shot.png please"
            texts = [b.text for b in content if isinstance(b, TextContent)]
            assert any("<file" in t and "one\ntwo\nthree" in t for t in texts)
            assert [b.mime_type for b in content if isinstance(b, ImageContent)] == ["image/png"]
            await wait_until(pilot, lambda: app.query(UserMessageView))
            shown = str(app.query_one(UserMessageView).render())
            assert "attached: notes.txt (3 lines)" in shown
            assert "attached: shot.png (image" in shown
            assert "two" not in shown  # the file's content stays out of the transcript

    run(scenario())


def test_a_binary_file_is_refused_and_the_message_comes_back(tui: TuiHarness) -> None:
    (tui.cwd / "blob.bin").write_bytes(b"\x00\x01binary")
    faux = tui.faux(text_turn("never"))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None)
            await send(pilot, "look at @blob.bin please")
            await wait_until(pilot, lambda: has_notice(app, "looks like a binary file"))
            assert has_notice(app, "Not sent")
            assert app.editor.text == "look at @blob.bin please"
            assert faux.requests == []

    run(scenario())


def test_a_mention_typed_while_busy_is_queued_with_its_file(tui: TuiHarness) -> None:
    (tui.cwd / "notes.txt").write_text("queued-body\n", encoding="utf-8")
    faux = tui.faux(FauxTurn([], hang=True), text_turn("done"))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            session = await open_session(pilot)
            await send(pilot, "start")
            await wait_until(pilot, lambda: session.is_running)
            await send(pilot, "also @notes.txt now")
            await wait_until(pilot, lambda: session.queued_steering == ["also @notes.txt now"])
            (queued,) = session._agent.queued_steering  # the file went, not only its mention
            assert "queued-body" in str(queued.content)

    run(scenario())


def test_a_missing_file_is_said_under_the_message_it_belongs_to(tui: TuiHarness) -> None:
    from picode.tui.widgets.notice import NoticeView

    faux = tui.faux(text_turn("ok"))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None)
            await send(pilot, "look at @nowhere.txt")
            await wait_until(pilot, lambda: has_notice(app, "@nowhere.txt: no such file"))
            entries = list(app.transcript.entries)
            message = next(i for i, e in enumerate(entries) if isinstance(e, UserMessageView))
            warning = next(
                i
                for i, e in enumerate(entries)
                if isinstance(e, NoticeView) and "@nowhere.txt" in e.text
            )
            assert warning == message + 1

    run(scenario())
