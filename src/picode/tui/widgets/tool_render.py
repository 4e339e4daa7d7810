"""How each tool's call and result read on screen: pure functions from data to ``Content``.

Kept apart from the widget so they can be tested without an app and so a new tool only
needs a renderer here. Styles name theme tokens (``$diff-added`` ...), resolved at paint time.
Arguments are shown spelled out (``picode.ai.untrusted.visible``: what was approved is what
ran), output with its escape sequences removed (``safe``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from textual.content import Content

from picode.agent.tool import ToolResult
from picode.ai.untrusted import one_line, safe, visible
from picode.session.mcp import tool_display_name
from picode.session.todos import TODO_TOOL, todos_from
from picode.tui.diff_lines import DiffLineKind, diff_in, diff_line_kind
from picode.tui.widgets.todos import render_todos

ToolState: TypeAlias = Literal["streaming", "awaiting", "running", "success", "error"]

#: Which argument says what a call is about, per tool.
KEY_ARGUMENTS: dict[str, str] = {
    "read": "path",
    "write": "path",
    "edit": "path",
    "ls": "path",
    "bash": "command",
    "grep": "pattern",
    "find": "pattern",
    "task": "description",
}
BASH_TAIL_LINES = 10
COLLAPSED_LINES = 6
DIFF_COLLAPSED_LINES = 60
EXPANDED_LINES = 2000
MAX_LINE_CHARS = 400
#: A line's characters once expanded: all of it, in practice (a result is ~50 kB at most).
EXPANDED_LINE_CHARS = 20_000
#: A line's characters once expanded: all of it, in practice (a result is ~50 kB at most).
EXPANDED_LINE_CHARS = 20_000
KEY_ARGUMENT_CHARS = 300

#: A Markdown heading's marks, left out of a one-line summary (a plan's first line).
_HEADING_MARKS = re.compile(r"#{1,6}[ \t]+")

_STATE_STYLE: dict[ToolState, str] = {
    "streaming": "$muted",
    "awaiting": "$tool-pending",
    "running": "$tool-pending",
    "success": "$tool-success",
    "error": "$tool-error",
}


def key_argument(name: str, args: dict[str, Any]) -> str | None:
    """The argument worth showing next to the tool name, once the stream has revealed it."""
    if name == TODO_TOOL:
        return _todo_counts(args)
    key = KEY_ARGUMENTS.get(name)
    value = args.get(key) if key else None
    if value is None:
        # Unknown tools: the first short string argument says most.
        value = next((v for v in args.values() if isinstance(v, str) and v.strip()), None)
    if not isinstance(value, str) or not value:
        return None
    if name == "grep" and isinstance(args.get("path"), str) and args["path"]:
        value = f"{value}  in {args['path']}"
    first_line, _, rest = value.strip().partition("\n")
    if name == "exit_plan_mode":
        first_line = _HEADING_MARKS.sub("", first_line, count=1)
    first_line = visible(first_line)
    if rest:
        first_line += " …"
    return _clip(first_line, KEY_ARGUMENT_CHARS)


def header(name: str, args: dict[str, Any], state: ToolState) -> Content:
    # An MCP tool shows its server: "files › read_file" rather than mcp__files__read_file.
    title = one_line(tool_display_name(name) or name)
    parts: list[tuple[str, str] | str] = [("● ", _STATE_STYLE[state]), (title, "bold")]
    argument = key_argument(name, args)
    if argument:
        parts += ["  ", (argument, "$text-secondary" if name == "bash" else "")]
    if state == "streaming":
        parts.append(("  …", "$muted"))
    elif state == "awaiting":
        parts.append(("  waiting for approval", "$tool-pending italic"))
    elif state == "running":
        parts.append(("  running…", "$muted italic"))
    return Content.assemble(*parts)


def running_body(name: str, partial: ToolResult | None) -> Content | None:
    """What shows while the tool runs: the live tail of its output."""
    if partial is None:
        return None
    text = safe(partial.text_content)
    if not text.strip():
        return None
    # Ctrl+O acts on finished results only: no hint on the live tail.
    return _tail(text, BASH_TAIL_LINES, None, style="$muted")


def result_body(
    name: str, args: dict[str, Any], result: ToolResult, is_error: bool, expanded: bool
) -> Content | None:
    text = safe(result.text_content)
    if is_error:
        limit = EXPANDED_LINES if expanded else BASH_TAIL_LINES
        text = text or "(no error message)"
        # A failed command says why at the end (exit code, signal); other tools at the start.
        if name == "bash":
            return _tail(text, limit, expanded, style="$tool-error")
        return _head(text, limit, expanded, style="$tool-error")
    todos = todos_from(result.details) if name == TODO_TOOL else None
    if todos is not None:
        # The list with the panel's marks, not the text the model reads back.
        if not todos:
            return Content.styled("List cleared", "$muted")
        return render_todos(todos, EXPANDED_LINES if expanded else COLLAPSED_LINES)
    diff = diff_in(result.details)
    if name == "edit" and diff is not None:
        return render_diff(diff, None if expanded else DIFF_COLLAPSED_LINES)
    if name == "bash":
        return _tail(text, EXPANDED_LINES if expanded else BASH_TAIL_LINES, expanded, style="")
    if name == "exit_plan_mode":
        # What became of the plan; Ctrl+O shows the plan itself (``result_markdown``).
        outcome = text.strip().partition("\n")[0].partition(". ")[0].rstrip(".")
        return Content.styled(
            f"{_clip(outcome, MAX_LINE_CHARS)}. {toggle_hint(expanded)}", "$muted"
        )
    if name in ("read", "write"):
        source = text if name == "read" else visible(str(args.get("content", "")))
        summary = _summary_line(name, source, result, expanded)
        if not expanded:
            return Content.styled(summary, "$muted")
        return Content("\n").join(
            [Content.styled(summary, "$muted"), _head(source, EXPANDED_LINES, expanded)]
        )
    limit = EXPANDED_LINES if expanded else COLLAPSED_LINES
    return _head(text, limit, expanded) if text.strip() else _images_note(result)


@dataclass(frozen=True, slots=True)
class MarkdownPart:
    """Model-written Markdown that ends a tool's body (a plan, a subagent's answer): drawn
    as a reply is, under the body's other lines, with ``note`` (lines left out) after it."""

    source: str
    note: Content | None = None


def result_markdown(
    name: str, args: dict[str, Any], result: ToolResult, is_error: bool, expanded: bool
) -> MarkdownPart | None:
    """The part of a finished call's body that is Markdown, if any (after ``result_body``)."""
    if name == "exit_plan_mode" and expanded and not is_error:
        plan = str(args.get("plan", ""))
        return markdown_head(plan, EXPANDED_LINES, expanded) if plan.strip() else None
    return None


def markdown_head(text: str, limit: int, expanded: bool) -> MarkdownPart:
    """The first ``limit`` source lines of ``text``, and a note of the rest. The source is
    drawn escaped by the Markdown view (``safe``), like a reply."""
    lines = text.splitlines()
    if len(lines) <= limit:
        return MarkdownPart(text)
    note = _more_note(len(lines) - limit, "more lines", expanded)
    return MarkdownPart("\n".join(lines[:limit]), note)


DIFF_STYLES: dict[DiffLineKind, str] = {
    "file": "bold $diff-context",
    "add": "$diff-added on $diff-added-background",
    "del": "$diff-removed on $diff-removed-background",
    "hunk": "$diff-hunk",
    "ctx": "$diff-context",
}


def render_diff(diff: str, limit: int | None) -> Content:
    """A unified diff, coloured line by line."""
    lines = diff.rstrip("\n").split("\n")  # not splitlines(): a \r stays, spelled out
    shown = lines if limit is None else lines[:limit]
    rendered: list[Content] = []
    width = EXPANDED_LINE_CHARS if limit is None else MAX_LINE_CHARS
    cut = False
    for line in shown:
        spelled = visible(line)
        cut = cut or len(spelled) > width
        line = _clip(spelled, width)
        rendered.append(Content.styled(line, DIFF_STYLES[diff_line_kind(line)]))
    if len(shown) < len(lines):
        rendered.append(_more_note(len(lines) - len(shown), "more lines", expanded=False))
    elif cut and limit is not None:
        rendered.append(_cut_note())
    return Content("\n").join(rendered)


def _todo_counts(args: dict[str, Any]) -> str | None:
    items = args.get("todos")
    if not isinstance(items, list) or not items:
        return None
    done = sum(1 for item in items if isinstance(item, dict) and item.get("status") == "completed")
    return f"{done}/{len(items)} done"


def _summary_line(name: str, source: str, result: ToolResult, expanded: bool) -> str:
    details = result.details if isinstance(result.details, dict) else {}
    count = details.get("lines")
    if not isinstance(count, int):
        count = _count_lines(source)
    noun = "line" if count == 1 else "lines"
    hint = toggle_hint(expanded)
    if name == "write":
        return f"Wrote {count} {noun} {hint}"
    if result.images and not source:
        images = len(result.images)
        return f"Read {images} image{'s' if images > 1 else ''}"
    start, end, total = (details.get(k) for k in ("start_line", "end_line", "total_lines"))
    if isinstance(start, int) and isinstance(end, int) and isinstance(total, int):
        if total == 0:
            return "Read an empty file"
        if start > 1 or end < total:
            return f"Read lines {start}-{end} of {total} {hint}"
        return f"Read {total} line{'s' if total != 1 else ''} {hint}"
    return f"Read {count} {noun} {hint}"


def toggle_hint(expanded: bool) -> str:
    """What Ctrl+O does from here: the hint must name the next action, not the last one."""
    return "(ctrl+o to fold)" if expanded else "(ctrl+o to expand)"


def _images_note(result: ToolResult) -> Content | None:
    count = len(result.images)
    if not count:
        return None
    return Content.styled(f"[{count} image{'s' if count > 1 else ''}]", "$muted")


def _head(text: str, limit: int, expanded: bool, style: str = "") -> Content:
    lines = text.splitlines()
    body, cut = _clipped(lines[:limit], expanded, style)
    if len(lines) > limit:
        return Content("\n").join([body, _more_note(len(lines) - limit, "more lines", expanded)])
    return Content("\n").join([body, _cut_note()]) if cut else body


def _tail(text: str, limit: int, expanded: bool | None, style: str) -> Content:
    lines = text.rstrip("\n").splitlines()
    shown = lines[-limit:]
    body, cut = _clipped(shown, expanded, style)
    hidden = len(lines) - len(shown)
    if hidden > 0:
        return Content("\n").join([_more_note(hidden, "earlier lines", expanded), body])
    return Content("\n").join([body, _cut_note()]) if cut else body


def _clipped(lines: list[str], expanded: bool | None, style: str) -> tuple[Content, bool]:
    """``lines``, each cut to what its fold shows; and whether the fold cut one that Ctrl+O
    would show whole (a running tool's tail cannot be expanded: no hint then)."""
    limit = EXPANDED_LINE_CHARS if expanded else MAX_LINE_CHARS
    text = "\n".join(_clip(line, limit) for line in lines)
    cut = expanded is False and any(len(line) > limit for line in lines)
    return (Content.styled(text, style) if style else Content(text)), cut


def _cut_note() -> Content:
    return Content.styled(f"… long lines cut {toggle_hint(False)}", "$muted italic")


def _more_note(count: int, what: str, expanded: bool | None) -> Content:
    """Lines left out. Expanded output is capped too (``EXPANDED_LINES``): those lines are
    not shown at all, and Ctrl+O folds, so the note says so rather than offer to expand.
    ``None``: Ctrl+O does nothing here (a running tool), so no hint."""
    if expanded is None:
        return Content.styled(f"… {count} {what}", "$muted italic")
    if expanded:
        return Content.styled(f"… {count} {what} not shown {toggle_hint(True)}", "$muted italic")
    return Content.styled(f"… {count} {what} {toggle_hint(False)}", "$muted italic")


def _count_lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
