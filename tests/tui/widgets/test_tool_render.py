"""Tool renderers: key arguments, diffs, bash tails, read/write summaries, errors."""

from __future__ import annotations

from textual.content import Content

from picode.agent.tool import ToolResult
from picode.tui.widgets import tool_render


def _line_styles(content: Content) -> dict[str, str]:
    """Each rendered line → the styles of the spans covering its start."""
    out: dict[str, str] = {}
    offset = 0
    for line in content.plain.split("\n"):
        styles = [str(s.style) for s in content.spans if s.start <= offset < s.end]
        out[line] = " ".join(styles)
        offset += len(line) + 1
    return out


def test_key_argument_per_tool() -> None:
    key = tool_render.key_argument
    assert key("read", {"path": "src/app.py", "offset": 3}) == "src/app.py"
    assert key("write", {"content": "x", "path": "new.txt"}) == "new.txt"
    assert key("edit", {"path": "a.py", "old_text": "x"}) == "a.py"
    assert key("bash", {"command": "make test\nmake lint"}) == "make test …"
    assert key("grep", {"pattern": "TODO", "path": "src"}) == "TODO  in src"
    assert key("find", {"pattern": "*.py"}) == "*.py"
    assert key("my_tool", {"count": 3, "query": "weather"}) == "weather"
    assert key("read", {}) is None
    assert len(key("bash", {"command": "x" * 1000}) or "") == tool_render.KEY_ARGUMENT_CHARS


def test_header_marks_a_call_whose_arguments_are_still_streaming() -> None:
    streaming = tool_render.header("bash", {"command": "ls"}, "streaming").plain
    done = tool_render.header("bash", {"command": "ls"}, "success").plain
    assert streaming.endswith("…") and "bash" in streaming and "ls" in streaming
    assert not done.endswith("…")


def test_diff_lines_are_coloured_by_kind() -> None:
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-old line\n+new line\n context"
    styles = _line_styles(tool_render.render_diff(diff, None))
    assert "$diff-removed" in styles["-old line"]
    assert "$diff-added" in styles["+new line"]
    assert "$diff-hunk" in styles["@@ -1,2 +1,2 @@"]
    assert "$diff-context" in styles[" context"]
    assert "$diff-added" not in styles["+++ b/x.py"]


def test_long_diff_is_cut_when_collapsed_and_whole_when_expanded() -> None:
    diff = "\n".join(f"+line {i}" for i in range(100))
    result = ToolResult.text("Edited", {"diff": diff})
    collapsed = tool_render.result_body("edit", {}, result, False, expanded=False)
    expanded = tool_render.result_body("edit", {}, result, False, expanded=True)
    assert collapsed is not None and expanded is not None
    assert "+line 99" not in collapsed.plain and "40 more lines" in collapsed.plain
    assert "+line 99" in expanded.plain


def test_bash_shows_the_tail_of_its_output() -> None:
    output = "\n".join(f"out {i}" for i in range(30))
    body = tool_render.result_body("bash", {}, ToolResult.text(output), False, expanded=False)
    assert body is not None
    lines = body.plain.split("\n")
    assert lines[0].startswith("… 20 earlier lines")
    assert lines[1:] == [f"out {i}" for i in range(20, 30)]
    running = tool_render.running_body("bash", ToolResult.text(output))
    assert running is not None and running.plain.split("\n")[-1] == "out 29"


def test_failed_bash_shows_its_end_in_the_error_colour() -> None:
    output = "\n".join(f"err {i}" for i in range(30)) + "\n\nExit code: 2"
    body = tool_render.result_body("bash", {}, ToolResult.text(output), True, expanded=False)
    assert body is not None
    assert body.plain.endswith("Exit code: 2")
    assert "$tool-error" in _line_styles(body)["Exit code: 2"]


def test_read_and_write_collapse_to_a_summary() -> None:
    read = ToolResult.text(
        "a\nb\nc", {"path": "f", "start_line": 1, "end_line": 3, "total_lines": 300}
    )
    body = tool_render.result_body("read", {"path": "f"}, read, False, expanded=False)
    assert body is not None and body.plain == "Read lines 1-3 of 300 (ctrl+o to expand)"
    opened = tool_render.result_body("read", {"path": "f"}, read, False, expanded=True)
    assert opened is not None and opened.plain.endswith("a\nb\nc")
    write = ToolResult.text("Wrote f", {"path": "f", "lines": 3, "bytes": 6})
    args = {"path": "f", "content": "1\n2\n3\n"}
    body = tool_render.result_body("write", args, write, False, expanded=False)
    assert body is not None and body.plain == "Wrote 3 lines (ctrl+o to expand)"


def test_other_tools_show_their_first_lines() -> None:
    text = "\n".join(f"match {i}" for i in range(20))
    body = tool_render.result_body("grep", {}, ToolResult.text(text), False, expanded=False)
    assert body is not None
    assert body.plain.split("\n")[: tool_render.COLLAPSED_LINES] == [
        f"match {i}" for i in range(tool_render.COLLAPSED_LINES)
    ]
    assert "14 more lines" in body.plain


def test_hints_name_what_ctrl_o_does_next() -> None:
    text = "\n".join(f"match {i}" for i in range(3000))
    folded = tool_render.result_body("grep", {}, ToolResult.text(text), False, expanded=False)
    opened = tool_render.result_body("grep", {}, ToolResult.text(text), False, expanded=True)
    assert folded is not None and opened is not None
    assert folded.plain.endswith("2994 more lines (ctrl+o to expand)")
    assert opened.plain.endswith("1000 more lines not shown (ctrl+o to fold)")
    tail = tool_render.running_body("bash", ToolResult.text(text))
    assert tail is not None and "ctrl+o" not in tail.plain  # no toggle while it runs


HOSTILE = "\x1b]52;c;aGVsbG8=\x07\x1b]0;pwned\x07\x1b[2J\x9b2J"


def test_arguments_are_spelled_out_and_output_loses_its_escapes() -> None:
    spoof = {"command": "echo HIDDEN > x\r\x1b[2K\x1b[1Als -la"}
    header = tool_render.header("bash", spoof, "running").plain
    assert "echo HIDDEN > x\\r␛[2K␛[1Als -la" in header and "\x1b" not in header
    output = ToolResult.text(f"before{HOSTILE}after\n")
    for body in (
        tool_render.result_body("bash", spoof, output, False, expanded=True),
        tool_render.result_body("mcp__srv__tool", {}, output, False, expanded=True),
        tool_render.result_body("bash", spoof, output, True, expanded=False),
        tool_render.running_body("bash", output),
    ):
        assert body is not None and body.plain.startswith("beforeafter")
    diff = tool_render.render_diff("--- a\n+++ b\n@@ -1 +1 @@\n-x\r\n+y\x1b[8m\n", None)
    assert diff.plain.splitlines()[-2:] == ["-x\\r", "+y␛[8m"]
    written = tool_render.result_body(
        "write", {"path": "a", "content": "z\x07\n"}, ToolResult.text("ok"), False, True
    )
    assert written is not None and "z\\x07" in written.plain


def test_exit_plan_mode_says_what_became_of_the_plan_and_expands_to_it() -> None:
    args = {"plan": "## Steps\n1. write \x1b[31mout.txt"}
    result = ToolResult.text("The user approved the plan. Plan mode is off: carry it out.")
    folded = tool_render.result_body("exit_plan_mode", args, result, False, expanded=False)
    assert folded is not None
    assert folded.plain == "The user approved the plan. (ctrl+o to expand)"
    assert tool_render.result_markdown("exit_plan_mode", args, result, False, False) is None
    expanded = tool_render.result_body("exit_plan_mode", args, result, False, expanded=True)
    assert expanded is not None
    assert expanded.plain == "The user approved the plan. (ctrl+o to fold)"
    # The plan itself follows as Markdown (the view escapes it as it does a reply).
    plan = tool_render.result_markdown("exit_plan_mode", args, result, False, expanded=True)
    assert plan == tool_render.MarkdownPart(args["plan"])


def test_a_plans_header_reads_without_its_heading_marks() -> None:
    header = tool_render.header("exit_plan_mode", {"plan": "## Steps\n1. go"}, "awaiting")
    assert header.plain == "● exit_plan_mode  Steps …  waiting for approval"
    # Only a plan's: a command's leading hashes are what runs.
    bash = tool_render.header("bash", {"command": "# note"}, "running")
    assert "# note" in bash.plain


def test_markdown_is_cut_by_source_lines_with_a_note_of_the_rest() -> None:
    text = "\n".join(f"- item {i}" for i in range(9))
    whole = tool_render.markdown_head(text, 9, expanded=False)
    assert whole == tool_render.MarkdownPart(text)
    head = tool_render.markdown_head(text, 6, expanded=False)
    assert head.source.splitlines() == [f"- item {i}" for i in range(6)]
    assert head.note is not None
    assert head.note.plain == "… 3 more lines (ctrl+o to expand)"


def test_a_long_line_is_cut_when_folded_says_so_and_shows_whole_when_expanded() -> None:
    long_line = "word " * 1000  # one line of 5,000 characters (minified code, a JSON blob)
    output = f"short\n{long_line}\nend"
    for name in ("bash", "grep"):
        folded = tool_render.result_body(name, {}, ToolResult.text(output), False, False)
        assert folded is not None
        lines = folded.plain.split("\n")
        assert len(lines[1]) == tool_render.MAX_LINE_CHARS and lines[1].endswith("…")
        assert lines[-1] == "… long lines cut (ctrl+o to expand)"
        expanded = tool_render.result_body(name, {}, ToolResult.text(output), False, True)
        assert expanded is not None
        assert expanded.plain.split("\n") == ["short", long_line.rstrip("\n"), "end"]
    # Nothing cut: no note. A running tool's tail cannot expand: cut without a hint.
    short = tool_render.result_body("bash", {}, ToolResult.text("a\nb"), False, False)
    assert short is not None and short.plain == "a\nb"
    running = tool_render.running_body("bash", ToolResult.text(long_line))
    assert running is not None and "ctrl+o" not in running.plain
    # An edit's diff alike.
    diff = f"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-{long_line}\n+{long_line}x"
    folded_diff = tool_render.render_diff(diff, tool_render.DIFF_COLLAPSED_LINES)
    assert folded_diff.plain.endswith("… long lines cut (ctrl+o to expand)")
    assert f"+{long_line}x" in tool_render.render_diff(diff, None).plain
