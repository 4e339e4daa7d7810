"""A subagent's block as text: its status line, the expanded transcript, untrusted text."""

from __future__ import annotations

from typing import Any

from picode.agent.tool import ToolResult
from picode.tui.widgets.subagent_render import subagent_body


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


def test_a_finished_subagent_shows_its_answer_folded() -> None:
    answer = ToolResult.text("\n".join(f"line {i}" for i in range(10)))
    lines = subagent_body(state(status="done", tool_uses=2), answer, False, False).plain
    assert lines.split("\n")[0] == "explore · 2 tool uses · 0 tokens · 0.0s  (ctrl+o to expand)"
    assert "line 5" in lines and "line 6" not in lines
    assert lines.endswith("… 4 more lines (ctrl+o to expand)")


def test_the_childs_text_cannot_reach_the_terminal_raw() -> None:
    shown = state(
        agent="ev\x1b[2Jil",
        tool="bash echo\x1b]0;title\x07",
        transcript=[["text", "a\x1b[31mred\x1b[0m"], ["tool", "bash rm\x1b[2K -rf"]],
    )
    text = subagent_body(shown, ToolResult.text("done\x1b[5m"), False, True).plain
    assert "\x1b" not in text and "\x07" not in text
    assert "ared" in text
