"""A subagent's block as text: its status line, the expanded transcript, untrusted text."""

from __future__ import annotations

from typing import Any

from picode.agent.tool import ToolResult
from picode.tui.widgets.subagent_render import subagent_answer, subagent_body
from picode.tui.widgets.tool_render import MarkdownPart


def state(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "description": "look",
        "agent": "explore",
        "status": "running",
        "tool": None,
        "tool_uses": 0,
        "tokens": 0,
        "elapsed_s": 0.0,
        "session_file": None,
        "transcript": [],
    }
    return {**base, **fields}


def test_a_running_subagent_says_what_it_runs_now() -> None:
    body = subagent_body(state(tool="grep retry", tokens=3240, elapsed_s=4.06), None, False, False)
    assert body.plain == "explore · grep retry · 3.2k tokens · 4.1s"


def test_without_a_tool_it_is_working_and_a_transcript_offers_to_expand() -> None:
    body = subagent_body(state(tokens=12, transcript=[["text", "hi"]]), None, False, False)
    assert body.plain == "explore · working… · 12 tokens · 0.0s  (ctrl+o to expand)"


def test_expanded_shows_the_transcript_and_the_file() -> None:
    shown = state(
        transcript=[["text", "First\nsecond"], ["tool", "read a.py"], ["error", "read failed"]],
        session_file="/s/child.jsonl",
    )
    lines = subagent_body(shown, None, False, True).plain.split("\n")
    assert lines[1:] == [
        "First",
        "second",
        "● read a.py",
        "read failed",
        "Transcript: /s/child.jsonl",
    ]


def test_a_finished_subagent_shows_its_answer_folded_as_markdown() -> None:
    answer = ToolResult.text("\n".join(f"line {i}" for i in range(10)))
    body = subagent_body(state(status="done", tool_uses=2), answer, False, False).plain
    assert body == "explore · 2 tool uses · 0 tokens · 0.0s  (ctrl+o to expand)"
    folded = subagent_answer(answer, False, False)
    assert folded is not None and folded.note is not None
    assert folded.source.splitlines() == [f"line {i}" for i in range(6)]
    assert folded.note.plain == "… 4 more lines (ctrl+o to expand)"
    assert subagent_answer(answer, False, True) == MarkdownPart(answer.text_content)


def test_a_failed_subagent_says_why_in_its_block_not_as_markdown() -> None:
    failed = ToolResult.text("## not a heading\nthe child failed")
    body = subagent_body(state(status="error"), failed, True, False).plain
    assert body.endswith("## not a heading\nthe child failed")
    assert subagent_answer(failed, True, False) is None
    assert subagent_answer(ToolResult.text("  \n"), False, False) is None


def test_the_childs_text_cannot_reach_the_terminal_raw() -> None:
    shown = state(
        agent="ev\x1b[2Jil",
        tool="bash echo\x1b]0;title\x07",
        transcript=[["text", "a\x1b[31mred\x1b[0m"], ["tool", "bash rm\x1b[2K -rf"]],
    )
    text = subagent_body(shown, ToolResult.text("done\x1b[5m"), False, True).plain
    assert "\x1b" not in text and "\x07" not in text
    assert "ared" in text


def test_expanded_the_answer_is_not_repeated_at_the_end_of_the_transcript() -> None:
    shown = state(transcript=[["text", "Looking"], ["tool", "ls ."], ["text", "All **good**"]])
    answer = ToolResult.text("All **good**\n")
    lines = subagent_body(shown, answer, False, True).plain.split("\n")
    assert lines[1:] == ["Looking", "● ls ."]
    # An answer the transcript did not end with (cut, or another text) leaves it whole.
    other = subagent_body(shown, ToolResult.text("Other"), False, True).plain.split("\n")
    assert other[1:] == ["Looking", "● ls .", "All **good**"]
