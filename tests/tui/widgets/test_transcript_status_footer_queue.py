"""Widgets in small harness apps: transcript pruning, status line, footer, queue."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.strip import Strip
from textual.visual import Visual
from textual.widget import Widget

from picode.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from picode.tui.controllers.router import EventRouter
from picode.tui.widgets.footer import (
    FooterInfo,
    InfoFooter,
    display_path,
    format_tokens,
    git_branch,
)
from picode.tui.widgets.messages import UserMessageView
from picode.tui.widgets.notice import NoticeView
from picode.tui.widgets.pacing import TICK_S
from picode.tui.widgets.queue import QueueView
from picode.tui.widgets.status import SPINNER, StatusLine, format_elapsed
from picode.tui.widgets.tool_call import ToolCallView
from picode.tui.widgets.transcript import Transcript
from tests.tui.conftest import FakeClock, run
from tests.tui.hosts import TokensHost


def _run_with(*widgets: Widget, body: Any, size: tuple[int, int] = (80, 24)) -> None:
    app = TokensHost(*widgets)

    async def scenario() -> None:
        async with app.run_test(size=size) as pilot:
            await body(app, pilot)

    run(scenario())


def test_transcript_keeps_only_the_newest_entries_mounted() -> None:
    transcript = Transcript(max_entries=10)

    async def body(app: TokensHost, pilot: Any) -> None:
        for i in range(30):
            transcript.add(NoticeView(f"note {i}"))
        await pilot.pause()
        mounted = list(transcript.query(NoticeView))
        assert [n.text for n in mounted] == [f"note {i}" for i in range(20, 30)]
        label = transcript.query_one("#hidden-count")
        assert label.display
        assert "20 earlier messages hidden" in str(label.render())

    _run_with(transcript, body=body)


class FakeRouterHost:
    """Stands in for the app the router draws in, refreshes the footer of and lists the
    queue for (its ``RouterHost``), with no session open."""

    session = None

    def __init__(self, transcript: Transcript) -> None:
        self.transcript, self.status, self.queue = transcript, StatusLine(), QueueView()

    def refresh_footer(self) -> None:
        pass

    def queued_messages(self) -> tuple[list[str], list[str]]:
        return [], []

    def session_switched(self, reason: str) -> None:
        pass


def test_a_two_thousand_message_history_builds_only_the_tail() -> None:
    transcript = Transcript(max_entries=150)
    history: list[Any] = []
    for i in range(1000):
        history.append(UserMessage(f"question {i}"))
        history.append(
            AssistantMessage([TextContent(f"answer {i}")], api="x", provider="x", model="x")
        )
    call = ToolCall("c1", "bash", {"command": "ls"})
    history += [
        AssistantMessage([call], api="x", provider="x", model="x", stop_reason="toolUse"),
        ToolResultMessage("c1", "bash", [TextContent("file.txt")]),
    ]

    async def body(app: TokensHost, pilot: Any) -> None:
        router = EventRouter(FakeRouterHost(transcript))
        router.show_history(history)
        await pilot.pause()
        assert len(transcript.entries) == 150
        assert transcript.hidden == 2001 - 150
        assert transcript.query(UserMessageView).last().text == "question 999"
        tool = transcript.query_one(ToolCallView)
        assert tool.state == "success" and "file.txt" in tool.body_text

    _run_with(transcript, body=body)


def test_status_line_counts_down_a_retry_each_second() -> None:
    clock = FakeClock()
    status = StatusLine(clock=clock)

    async def body(app: TokensHost, pilot: Any) -> None:
        status.show_retry(2, 3, 4000)
        assert status.render().plain == "Retrying in 4 s (attempt 2/3) · esc to cancel"
        clock.advance(1.0)
        assert "Retrying in 3 s" in status.render().plain
        clock.advance(3.5)
        assert "Retrying now" in status.render().plain
        status.start_working()  # the retried request has started
        assert not status.is_retrying
        clock.advance(65)
        assert "Working… 1m 05s" in status.render().plain
        assert "esc to interrupt" in status.render().plain
        status.stop_working()
        assert status.render().plain == ""

    _run_with(status, body=body)


def _cells(strip: Strip) -> list[tuple[str, object]]:
    return [(char, segment.style) for segment in strip for char in segment.text]


def test_while_working_the_status_line_draws_the_spinner_alone_as_the_whole_line_would() -> None:
    clock = FakeClock()
    status = StatusLine(clock=clock)

    async def body(app: TokensHost, pilot: Any) -> None:
        def drawn_whole() -> Strip:
            return Visual.to_strips(
                status, status.render(), status.size.width, 1, status.visual_style
            )[0]

        status.start_working()
        await pilot.pause()
        seconds_passed = 0
        for step in range(12):
            if step == 5:
                status.set_notice("compacting \x1b[2Jsoon", "warning")
            fast = status.render_line(0)
            assert _cells(fast) == _cells(drawn_whole())
            assert fast.text.startswith(SPINNER[step % len(SPINNER)] + " Working… ")
            kept, rest = status._drawn_rest, status.render().plain[2:]
            clock.advance(TICK_S)
            status.render_line(0)
            # Within a second only the spinner changes: the rest is not drawn again.
            if status.render().plain[2:] == rest:
                assert status._drawn_rest is kept
            else:
                seconds_passed += 1
        assert seconds_passed == 1
        status.styles.width = 30  # narrower: the rest ends in an ellipsis, as before
        await pilot.pause()
        assert status.render_line(0).text.endswith("…")
        assert _cells(status.render_line(0)) == _cells(drawn_whole())
        status.end_retry()
        status.show_retry(1, 3, 2000)  # no spinner: drawn whole
        assert status.render_line(0).text.startswith("Retrying in 2 s")

    _run_with(status, body=body)


def test_format_elapsed() -> None:
    assert [format_elapsed(s) for s in (0, 59.9, 60, 3600 + 120)] == [
        "0s",
        "59s",
        "1m 00s",
        "1h 02m",
    ]


def test_footer_shows_usage_context_model_and_thinking() -> None:
    footer = InfoFooter(
        FooterInfo(
            cwd="~/work/project",
            branch="feature",
            input_tokens=12_345,
            output_tokens=678,
            cache_read=40_000,
            cost=0.1234,
            context_tokens=50_000,
            context_window=200_000,
            model="claude-x",
            thinking="high",
            reasoning=True,
        )
    )

    async def body(app: TokensHost, pilot: Any) -> None:
        text = footer.render().plain
        assert text.startswith("~/work/project (feature)")
        assert text.endswith("↑12k ↓678  R40k  $0.123  25% of 200k  claude-x • thinking high")
        footer.update_info(session_name="bugfix")
        assert "(feature) • bugfix" in footer.render().plain
        await pilot.resize_terminal(70, 24)
        await pilot.pause()
        narrow = footer.render().plain
        # The least useful parts make way first; the folder and the model stay whole here.
        assert narrow.startswith("~/work/project") and "R40k" not in narrow
        assert narrow.endswith("claude-x • thinking high")
        assert len(narrow) == footer.content_size.width

    _run_with(footer, body=body, size=(120, 24))


def test_footer_at_60_columns_shortens_the_folder_and_keeps_whole_words() -> None:
    footer = InfoFooter(
        FooterInfo(
            cwd="~/src/a-rather-long-project-name",
            branch="feature/narrow-footer",
            session_name="bugfix",
            input_tokens=12_345,
            output_tokens=678,
            cost=0.1234,
            context_tokens=50_000,
            context_window=200_000,
            model="claude-sonnet-4-5",
            thinking="high",
            reasoning=True,
        )
    )

    async def body(app: TokensHost, pilot: Any) -> None:
        text = footer.render().plain
        assert len(text) == footer.content_size.width == 58
        assert text.endswith("25%  claude-sonnet-4-5 • thinking high")
        folder = text.split("  ")[0]
        assert folder.startswith("…") and folder.endswith("long-project-name")
        await pilot.resize_terminal(40, 24)
        await pilot.pause()
        tiny = footer.render().plain
        assert "thinking hi" not in tiny or "thinking high" in tiny  # never cut mid-word
        assert tiny.endswith("claude-sonnet-4-5") and tiny.startswith("…")

    _run_with(footer, body=body, size=(60, 24))


def test_a_mode_and_a_long_thinking_label_leave_the_token_counts_in() -> None:
    """Why the level differs from the one set goes first: the counts matter more."""
    footer = InfoFooter(
        FooterInfo(
            cwd="~/tm/proj",
            branch="master",
            input_tokens=3_600,
            output_tokens=209,
            context_tokens=5_000,
            context_window=1_000_000,
            model="claude-opus-5-5",
            thinking="low (the lowest this model allows)",
            reasoning=True,
            mode="all",
        )
    )

    async def body(app: TokensHost, pilot: Any) -> None:
        text = footer.render().plain
        assert "↑3.6k ↓209" in text and "ask all" in text
        assert text.endswith("claude-opus-5-5 • thinking low")
        await pilot.resize_terminal(200, 24)
        await pilot.pause()
        wide = footer.render().plain
        assert wide.endswith("thinking low (the lowest this model allows)")
        assert "↑3.6k ↓209" in wide

    _run_with(footer, body=body, size=(110, 24))


def test_format_tokens() -> None:
    assert [format_tokens(n) for n in (999, 1500, 12_345, 2_500_000)] == [
        "999",
        "1.5k",
        "12k",
        "2.5M",
    ]


def test_git_branch_reads_head_without_git(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/feature/x\n")
    (repo / "sub" / "dir").mkdir(parents=True)
    assert git_branch(repo / "sub" / "dir") == "feature/x"
    (repo / ".git" / "HEAD").write_text("0123456789abcdef\n")
    assert git_branch(repo) == "0123456"
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (tmp_path / "gitdirs" / "wt").mkdir(parents=True)
    (tmp_path / "gitdirs" / "wt" / "HEAD").write_text("ref: refs/heads/wt-branch\n")
    (worktree / ".git").write_text(f"gitdir: {tmp_path / 'gitdirs' / 'wt'}\n")
    assert git_branch(worktree) == "wt-branch"
    lone = tmp_path / "lone"
    lone.mkdir()
    assert git_branch(lone) in (None, git_branch(tmp_path))  # no repo of its own


def test_display_path_abbreviates_home(tmp_path: Path) -> None:
    assert display_path(tmp_path / "a" / "b", home=tmp_path) == str(Path("~", "a", "b"))
    assert display_path(tmp_path, home=tmp_path) == "~"
    assert display_path(Path("/elsewhere"), home=tmp_path) == str(Path("/elsewhere"))


def test_queue_view_lists_steering_then_follow_ups() -> None:
    queue = QueueView()

    async def body(app: TokensHost, pilot: Any) -> None:
        assert not queue.display
        queue.show(["fix the test\nwith detail"], ["then commit"])
        text = str(queue.render())
        assert "steer: fix the test…" in text
        assert "follow-up: then commit" in text
        assert queue.display
        queue.show([], [])
        assert not queue.display

    _run_with(queue, body=body)
