"""The app on a real session: streaming text, tool calls as they stream, tool results."""

from __future__ import annotations

from picode.ai.providers.faux import FauxText, FauxThinking, FauxToolCall, FauxTurn, text_turn
from picode.tui.widgets.markdown import StreamingMarkdown
from picode.tui.widgets.messages import AssistantMessageView, ThinkingView, UserMessageView
from picode.tui.widgets.tool_call import ToolCallView
from tests.tui.conftest import SIZE, TuiHarness, press_now, run, type_text, wait_until


def test_streaming_text_appears_while_the_provider_sends(tui: TuiHarness) -> None:
    faux = tui.faux(
        FauxTurn([FauxThinking("let me think"), FauxText("Hello **world**, " * 20)], delay=0.03)
    )
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None, what="session open")
            await type_text(pilot, "hi there")
            press_now(app, "enter")
            await wait_until(pilot, lambda: app.query(UserMessageView), what="user message")
            assert app.query_one(UserMessageView).text == "hi there"
            # Part of the text is on screen before the provider has finished.
            session = app.session
            assert session is not None
            await wait_until(
                pilot,
                lambda: (
                    session.is_running
                    and any("world" in md.source for md in app.query(StreamingMarkdown))
                ),
                what="streamed markdown while the turn runs",
            )
            await wait_until(pilot, lambda: not session.is_running, what="turn end")
            markdown = app.query_one(StreamingMarkdown)
            await wait_until(pilot, lambda: markdown.source == "Hello **world**, " * 20)
            assert app.query_one(ThinkingView).text == "let me think"
            assert not app.status.is_working
            assert app.editor.text == ""
            # The footer follows the usage the session reports.
            info = app.info_footer.info
            assert info.output_tokens == session.usage.output > 0
            assert info.cost == session.usage.cost > 0
            assert f"↓{info.output_tokens}" in app.info_footer.right_text().plain

    run(scenario())


def test_tool_call_is_visible_before_its_arguments_finish(tui: TuiHarness) -> None:
    command = "echo from-the-tool && echo " + "x" * 200
    slow_call = FauxTurn([FauxToolCall("bash", {"command": command})], delay=0.02, chunk_size=4)
    faux = tui.faux(slow_call, text_turn("done"))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None)
            await type_text(pilot, "run it")
            press_now(app, "enter")
            await wait_until(pilot, lambda: app.query(ToolCallView), what="tool call widget")
            view = app.query_one(ToolCallView)
            assert view.tool_name == "bash"
            assert "bash" in view.header_text
            # Still streaming: the provider has not sent the whole argument JSON yet.
            assert view.state == "streaming"
            assert len(faux.requests) == 1 and faux.turns  # second turn not requested yet
            await wait_until(
                pilot, lambda: "echo from-the-tool" in view.header_text, what="key argument"
            )
            await wait_until(pilot, lambda: view.state == "success", what="tool result")
            assert "from-the-tool" in view.body_text
            await wait_until(pilot, lambda: not app.session.is_running)
            assert len(app.query(AssistantMessageView)) == 2

    run(scenario())


def test_a_reply_cut_at_the_output_limit_says_so_and_what_to_do(tui: TuiHarness) -> None:
    from tests.tui.conftest import has_notice, notices, send

    faux = tui.faux(FauxTurn([FauxText("The first half of the answer")], stop_reason="length"))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.session is not None)
            await send(pilot, "explain")
            await wait_until(pilot, lambda: has_notice(app, "output limit"), what="notice")
            (text,) = [n for n in notices(app) if "output limit" in n]
            assert f"{faux.model.max_tokens:,} tokens" in text
            assert "continue" in text and "max_tokens" in text

    run(scenario())
