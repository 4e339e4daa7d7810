"""The event router on its own: session notices land in the transcript and status line."""

from __future__ import annotations

from typing import Any

from picode.agent.events import AgentEnd, AgentStart, MessageEnd, MessageStart
from picode.ai.types import AssistantMessage, TextContent, UserMessage
from picode.session.events import (
    RETRY_SUPERSEDED,
    AutoRetryEnd,
    AutoRetryStart,
    CompactionEnd,
    CompactionStart,
    EditGuardAbort,
    Notice,
    QueueChanged,
    RuleTriggered,
    SessionSwitched,
)
from picode.tui.controllers.router import EventRouter
from picode.tui.widgets.markdown import MarkdownView
from picode.tui.widgets.messages import UserMessageView
from picode.tui.widgets.notice import NoticeView
from picode.tui.widgets.queue import QueueView
from picode.tui.widgets.status import StatusLine
from picode.tui.widgets.todos import TodoPanel
from picode.tui.widgets.transcript import Transcript
from tests.tui.conftest import FakeClock, run
from tests.tui.hosts import TokensHost


class FakeHost:
    """The app as the router sees it (its ``RouterHost``), with no session open."""

    session = None

    def __init__(self, history: list[Any]) -> None:
        self.transcript, self.status = Transcript(), StatusLine(clock=FakeClock())
        self.queue = QueueView()
        self.todo_panel = TodoPanel()
        self.history = history
        self.router: EventRouter | None = None
        self.footer_refreshes = 0

    def refresh_footer(self) -> None:
        self.footer_refreshes += 1

    def queued_messages(self) -> tuple[list[str], list[str]]:
        return [], []

    def session_switched(self, reason: str) -> None:
        assert self.router is not None
        self.router.show_history(self.history)  # as the app does: the new session's messages


def _scenario(body: Any, history: list[Any] | None = None) -> None:
    host = FakeHost(history or [])
    host.router = router = EventRouter(host)
    app = TokensHost(host.transcript, host.queue, host.status)

    async def scenario() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await body(router, pilot, host)

    run(scenario())


def _notices(router: EventRouter) -> list[tuple[str, str]]:
    return [(n.level, n.text) for n in router.transcript.query(NoticeView)]


def _assistant(stop_reason: Any = "stop", error: str | None = None) -> AssistantMessage:
    return AssistantMessage(
        [], api="x", provider="x", model="x", stop_reason=stop_reason, error_message=error
    )


def test_compaction_rule_guard_and_notice_events_are_shown() -> None:
    async def body(router: EventRouter, pilot: Any, host: FakeHost) -> None:
        router.handle(CompactionStart("threshold"))
        assert "Compacting context" in router.status.render().plain
        router.handle(CompactionEnd("threshold", "summary", 120_000))
        assert router.status.render().plain == ""
        router.handle(RuleTriggered("no-print", "text"))
        router.handle(EditGuardAbort("src/a.py", "old_text not found"))
        router.handle(Notice("warning", "extension failed", "ext"))
        router.handle(CompactionEnd("manual", None, 5, error="model refused"))
        await pilot.pause()
        assert _notices(router) == [
            ("info", "Context compacted from ~120,000 tokens"),
            ("warning", "Rule 'no-print' matched the text stream; retrying with it"),
            ("warning", "Edit of src/a.py stopped early: old_text not found"),
            ("warning", "ext: extension failed"),
            ("error", "Compaction failed: model refused"),
        ]

    _scenario(body)


def _fail(router: EventRouter, partial: str = "") -> AssistantMessage:
    """One failed attempt, as the session reports it (a cut stream leaves ``partial``)."""
    failed = _assistant("error", "529 Overloaded")
    if partial:
        failed.content = [TextContent(partial)]
    router.handle(AgentStart())
    router.handle(MessageStart(failed))
    router.handle(MessageEnd(failed))
    router.handle(AgentEnd([failed]))
    return failed


def _error_lines(router: EventRouter) -> list[str]:
    return [str(w.render()) for w in router.transcript.query(".error")]


def _partials(router: EventRouter) -> list[str]:
    return [view.source for view in router.transcript.query(MarkdownView)]


def _the_answer() -> AssistantMessage:
    answer = _assistant()
    answer.content = [TextContent("The answer.")]
    return answer


def _answer_after_retries(router: EventRouter, attempts: int) -> None:
    """The retried turn answers "The answer." and the retries end in success."""
    answer = _the_answer()
    router.handle(AgentStart())
    router.handle(MessageStart(answer))
    router.handle(MessageEnd(answer))
    router.handle(AgentEnd([answer]))
    router.handle(AutoRetryEnd(True, attempts))


def test_a_retry_sequence_keeps_one_line_updated_in_place_and_no_repeated_errors() -> None:
    async def body(router: EventRouter, pilot: Any, host: FakeHost) -> None:
        _fail(router)
        assert _error_lines(router) == ["Error: 529 Overloaded"]  # until a retry is due
        router.handle(AutoRetryStart(1, 3, 2000, "529 Overloaded"))
        assert router.status.is_retrying
        await pilot.pause()
        assert _notices(router) == [("warning", "529 Overloaded — retry 1/3 in 2 s")]
        assert _error_lines(router) == []  # the line says it now
        _fail(router, partial="Half an ans")
        router.handle(AutoRetryStart(2, 3, 4000, "529 Overloaded"))
        _fail(router, partial="Half an ans")
        router.handle(AutoRetryStart(3, 3, 8000, "529 Overloaded"))
        await pilot.pause()
        # One line, under the partial reply it speaks of.
        assert _notices(router) == [("warning", "529 Overloaded — retry 3/3 in 8 s")]
        assert isinstance(router.transcript.entries[-1], NoticeView)
        assert _partials(router) == ["Half an ans"]  # once, not per attempt
        _fail(router)
        router.handle(AutoRetryEnd(False, 3, "529 Overloaded"))
        await pilot.pause()
        assert not router.status.is_retrying
        assert _error_lines(router) == []
        assert _notices(router) == [("error", "Gave up after 3 retries: 529 Overloaded")]
        assert host.footer_refreshes >= 2  # at the message end and the run end

    _scenario(body)


def test_a_successful_retry_takes_the_failed_attempts_error_away() -> None:
    async def body(router: EventRouter, pilot: Any, host: FakeHost) -> None:
        _fail(router)
        router.handle(AutoRetryStart(1, 3, 2000, "529 Overloaded"))
        _answer_after_retries(router, 1)
        await pilot.pause()
        assert _error_lines(router) == []
        assert _notices(router) == [("info", "Answered after 1 retry (529 Overloaded)")]
        assert _partials(router) == ["The answer."]

    _scenario(body)


def test_a_message_typed_during_the_wait_says_the_retry_was_cancelled() -> None:
    async def body(router: EventRouter, pilot: Any, host: FakeHost) -> None:
        _fail(router)
        router.handle(AutoRetryStart(1, 3, 4000, "529 Overloaded"))
        router.handle(AutoRetryEnd(False, 1, RETRY_SUPERSEDED, superseded=True))
        await pilot.pause()
        assert not router.status.is_retrying
        assert _notices(router) == [
            (
                "warning",
                "Retry 1/3 cancelled: your new message is sent instead (529 Overloaded)",
            )
        ]

    _scenario(body)


def test_esc_during_a_retry_wait_ends_with_the_interrupted_marker() -> None:
    async def body(router: EventRouter, pilot: Any, host: FakeHost) -> None:
        router.handle(AutoRetryStart(1, 3, 4000, "Overloaded"))
        router.mark_interrupted()
        router.handle(AutoRetryEnd(False, 1, "Retry cancelled"))
        await pilot.pause()
        assert _notices(router) == [
            ("warning", "Retry 1/3 cancelled (Overloaded)"),
            ("interrupted", "Interrupted"),
        ]

    _scenario(body)


def test_session_switch_replaces_the_transcript_with_the_new_history() -> None:
    history = [UserMessage("from the other session"), _assistant()]

    async def body(router: EventRouter, pilot: Any, host: FakeHost) -> None:
        router.handle(MessageStart(UserMessage("old")))
        router.handle(QueueChanged(["queued"], []))
        assert router.queue.display
        router.handle(SessionSwitched("abc", "resume"))
        await pilot.pause()
        texts = [view.text for view in router.transcript.query(UserMessageView)]
        assert texts == ["from the other session"]

    _scenario(body, history)


def test_esc_shows_the_marker_and_stops_the_spinner_before_the_run_ends() -> None:
    async def body(router: EventRouter, pilot: Any, host: FakeHost) -> None:
        aborted = _assistant("aborted")
        router.handle(AgentStart())
        router.handle(MessageStart(aborted))
        assert router.status.working_since is not None
        router.mark_interrupted()
        # Nothing from the winding-down run has arrived yet.
        assert router.status.working_since is None
        last = router.transcript.entries[-1]
        assert isinstance(last, NoticeView)
        assert (last.level, last.text) == ("interrupted", "Interrupted")
        router.handle(MessageEnd(aborted))
        router.handle(AgentEnd([aborted]))
        router.handle(AutoRetryEnd(False, 1, "Retry cancelled"))
        await pilot.pause()
        assert _notices(router) == [("interrupted", "Interrupted")]
        # The next run starts clean and can be interrupted again.
        router.handle(AgentStart())
        router.mark_interrupted()
        router.handle(AgentEnd([]))
        await pilot.pause()
        assert _notices(router) == [("interrupted", "Interrupted")] * 2

    _scenario(body)


def test_a_resumed_interrupted_turn_shows_the_marker_after_it() -> None:
    history = [UserMessage("go"), _assistant("aborted"), UserMessage("again"), _assistant()]

    async def body(router: EventRouter, pilot: Any, host: FakeHost) -> None:
        router.show_history(history)
        await pilot.pause()
        kinds = [type(entry).__name__ for entry in router.transcript.entries]
        assert kinds == [
            "UserMessageView",
            "AssistantMessageView",
            "NoticeView",
            "UserMessageView",
            "AssistantMessageView",
        ]
        assert _notices(router) == [("interrupted", "Interrupted")]

    _scenario(body)


def test_a_resumed_failure_that_was_not_retried_shows_its_error() -> None:
    history = [UserMessage("go"), _assistant("error", "401 Unauthorized"), UserMessage("again")]

    async def body(router: EventRouter, pilot: Any, host: FakeHost) -> None:
        router.show_history(history)
        await pilot.pause()
        assert _error_lines(router) == ["Error: 401 Unauthorized"]
        assert _notices(router) == []

    _scenario(body)


def _incomplete_marks(router: EventRouter) -> list[str]:
    return [str(w.render()) for w in router.transcript.query(".incomplete")]


def _text_colour(router: EventRouter, view: MarkdownView) -> Any:
    """The colour the screen draws the first character of ``view`` in."""
    region = view.content_region
    return router.transcript.screen.get_style_at(region.x, region.y).color


def test_a_kept_partial_reply_is_drawn_dimmed_above_the_outcome_line() -> None:
    async def body(router: EventRouter, pilot: Any, host: FakeHost) -> None:
        _fail(router, partial="Half an ans")
        await pilot.pause()
        partial = router.transcript.query(MarkdownView).first()
        bright = _text_colour(router, partial)
        router.handle(AutoRetryStart(1, 3, 2000, "529 Overloaded"))
        _fail(router, partial="Half an answer again")
        router.handle(AutoRetryStart(2, 3, 2000, "529 Overloaded"))
        _answer_after_retries(router, 2)
        await pilot.pause()
        await pilot.pause()
        kept, final = router.transcript.query(MarkdownView)
        assert (kept.source, final.source) == ("Half an answer again", "The answer.")
        # Drawn in a dimmer colour than the answer, which keeps the colour the partial had.
        assert _text_colour(router, final) == bright
        assert _text_colour(router, kept) != bright
        # The partial, marked, then what became of it, then the answer.
        kinds = [type(entry).__name__ for entry in router.transcript.entries]
        assert kinds == ["AssistantMessageView", "NoticeView", "AssistantMessageView"]
        assert _incomplete_marks(router) == ["(incomplete)"]

    _scenario(body)


def test_a_resumed_retry_shows_the_outcome_lines_as_live() -> None:
    failed = _assistant("error", "529 Overloaded (retry after 1 s)")
    cut = _assistant("error", "529 Overloaded")
    cut.content = [TextContent("Half an ans")]
    answer = _the_answer()
    gave_up = _assistant("error", "529 Overloaded")
    history = [UserMessage("go"), failed, cut, answer, UserMessage("again"), failed, gave_up]

    async def body(router: EventRouter, pilot: Any, host: FakeHost) -> None:
        router.show_history(history)
        await pilot.pause()
        await pilot.pause()
        assert _partials(router) == ["Half an ans", "The answer."]
        assert _error_lines(router) == []
        assert _notices(router) == [
            ("info", "Answered after 2 retries (529 Overloaded)"),
            ("error", "Gave up after 1 retry: 529 Overloaded"),
        ]
        kinds = [type(entry).__name__ for entry in router.transcript.entries]
        assert kinds == [
            "UserMessageView",
            "AssistantMessageView",  # the cut attempt's text, dimmed
            "NoticeView",
            "AssistantMessageView",
            "UserMessageView",
            "NoticeView",
        ]
        kept = router.transcript.entries[1]
        assert kept.has_class("-superseded")
        assert _incomplete_marks(router) == ["(incomplete)"]

    _scenario(body)


def test_a_resumed_reply_cut_at_the_output_limit_keeps_its_notice() -> None:
    cut = _assistant("length")
    cut.content = [TextContent("The first half")]
    history = [UserMessage("explain"), cut]

    async def body(router: EventRouter, pilot: Any, host: FakeHost) -> None:
        router.show_history(history)
        await pilot.pause()
        assert [level for level, _ in _notices(router)] == ["warning"]
        assert "output limit" in _notices(router)[0][1]

    _scenario(body)


def test_a_resumed_shell_command_shows_as_it_ran_not_as_the_models_note() -> None:
    from picode.session.store import shell_run_text
    from picode.tui.widgets.tool_call import ToolCallView

    typed = UserMessage("I ran `make` and it failed")  # said by the person: stays a message
    history = [UserMessage(shell_run_text("echo hi", "hi\n")), typed, _assistant()]

    async def body(router: EventRouter, pilot: Any, host: FakeHost) -> None:
        router.show_history(history)
        await pilot.pause()
        first, second = list(router.transcript.entries)[:2]
        assert isinstance(first, ToolCallView) and first.has_class("-user-shell")
        assert (first.tool_name, first.args, first.is_finished) == (
            "bash",
            {"command": "echo hi"},
            True,
        )
        assert first.result is not None and first.result.text_content == "hi"
        assert isinstance(second, UserMessageView) and second.text == typed.text

    _scenario(body)


def test_a_resumed_call_without_a_result_says_picode_stopped_while_it_ran() -> None:
    """The file of a picode killed while a tool ran: the call, no result. Resumed, the call
    reads as stopped, not as one whose arguments still stream; a call with its result is
    drawn as it finished."""
    from picode.ai.types import TextContent, ToolCall, ToolResultMessage
    from picode.tui.controllers.router import UNFINISHED_CALL_TEXT
    from picode.tui.widgets.tool_call import ToolCallView

    done = ToolCall("call_1", "bash", {"command": "echo done"})
    cut = ToolCall("call_2", "bash", {"command": "sleep 30"})
    calling = AssistantMessage(
        [TextContent("Running both."), done, cut],
        api="x",
        provider="x",
        model="x",
        stop_reason="toolUse",
    )
    history = [
        UserMessage("go"),
        calling,
        ToolResultMessage("call_1", "bash", [TextContent("done")], is_error=False),
    ]

    async def body(router: EventRouter, pilot: Any, host: FakeHost) -> None:
        router.show_history(history)
        await pilot.pause()
        finished, stopped = router.transcript.query(ToolCallView)
        assert (finished.state, finished.body_text) == ("success", "done")
        assert stopped.state == "error" and "…" not in stopped.header_text
        assert UNFINISHED_CALL_TEXT in stopped.body_text

    _scenario(body)
