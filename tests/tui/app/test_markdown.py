"""Long replies in the app: a few widgets per message however long the reply, and the
streamed result equal to the finished (history) rendering of the same text."""

from __future__ import annotations

from picode.ai.providers.faux import FauxText, FauxTurn
from picode.ai.types import AssistantMessage, TextContent
from picode.tui.widgets.markdown import MarkdownView, StreamingMarkdown
from picode.tui.widgets.messages import AssistantMessageView, completed_assistant_view
from tests.tui.conftest import SIZE, TuiHarness, press_now, run, type_text, wait_until
from tests.tui.hosts import ScrollHost
from tests.tui.markdown_samples import sections, signature

#: Widgets under one assistant message with a single text block: the Markdown view
#: itself, whatever the reply's length (Textual's Markdown mounted ~5,000 for this one).
MAX_WIDGETS = 2


def long_reply(size: int) -> str:
    return sections(size) + "The end.\n"


def test_an_80_kb_reply_stays_a_few_widgets_while_and_after_it_streams(tui: TuiHarness) -> None:
    text = long_reply(80_000)
    faux = tui.faux(FauxTurn([FauxText(text)], chunk_size=200, delay=0.002))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None, what="session open")
            await type_text(pilot, "write a long document")
            press_now(app, "enter")
            session = app.session
            assert session is not None

            def streaming() -> StreamingMarkdown | None:
                found = list(app.query(StreamingMarkdown))
                return found[-1] if found else None

            await wait_until(
                pilot,
                lambda: (md := streaming()) is not None and len(md.source) > 40_000,
                timeout=20,
                what="half the reply shown",
            )
            assert session.is_running
            view = app.query(AssistantMessageView).last()
            assert len(list(view.query("*"))) <= MAX_WIDGETS

            await wait_until(pilot, lambda: not session.is_running, timeout=30, what="turn end")
            markdown = streaming()
            assert markdown is not None
            await wait_until(pilot, lambda: markdown.finished and markdown.source == text)
            await pilot.pause()
            assert len(list(view.query("*"))) <= MAX_WIDGETS
            assert signature(markdown.rows()) == signature(MarkdownView(text).rows())
            assert markdown.size.height == len(markdown.lines) > 1_000

    run(scenario(), timeout=90)


def test_a_finished_message_from_history_is_one_markdown_widget() -> None:
    text = long_reply(20_000)
    message = AssistantMessage([TextContent(text)], api="x", provider="x", model="x")
    view = completed_assistant_view(message, thinking_collapsed=False, tools_expanded=False)

    async def scenario() -> None:
        app = ScrollHost(view)
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            (markdown,) = view.query("*")
            assert isinstance(markdown, MarkdownView)
            assert not isinstance(markdown, StreamingMarkdown)
            assert markdown.source == text
            assert markdown.size.height == len(markdown.lines)
            assert markdown.render_line(0).text.startswith("Section 0")

    run(scenario())
