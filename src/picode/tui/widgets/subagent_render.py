"""How a ``task`` call's subagent reads on screen: one block under the call while it runs
(its agent, the tool it runs now, tokens, elapsed time), its answer when done (Markdown,
drawn as a reply is), and with Ctrl+O the child's transcript and where its session file is.
Pure functions, like ``tool_render``; everything the child's model wrote is untrusted and
drawn escaped."""

from __future__ import annotations

from typing import Any

from textual.content import Content

from picode.agent.tool import ToolResult
from picode.ai.untrusted import one_line, safe
from picode.tui.widgets.tool_render import (
    COLLAPSED_LINES,
    EXPANDED_LINES,
    MAX_LINE_CHARS,
    MarkdownPart,
    markdown_head,
    toggle_hint,
)

#: Transcript lines shown expanded (the whole transcript is in the child's session file).
EXPANDED_ENTRIES = 400


def subagent_body(
    state: dict[str, Any], result: ToolResult | None, is_error: bool, expanded: bool
) -> Content:
    """The block of a running or finished subagent, from its state (``subagent_state``); a
    successful answer follows it as Markdown (``subagent_answer``), an error is part of it."""
    parts = [status_line(state, result is not None, expanded)]
    if expanded:
        answer = result.text_content.strip() if result is not None and not is_error else None
        parts.extend(_transcript(state, answer))
        path = state.get("session_file")
        if isinstance(path, str) and path:
            parts.append(Content.styled(f"Transcript: {one_line(path)}", "$muted"))
    if result is not None and is_error:
        text = safe(result.text_content).strip()
        if text:
            lines = text.splitlines()
            shown = lines if expanded else lines[:COLLAPSED_LINES]
            parts.append(Content.styled("\n".join(_clip(line) for line in shown), "$tool-error"))
            if len(shown) < len(lines):
                parts.append(
                    Content.styled(
                        f"… {len(lines) - len(shown)} more lines {toggle_hint(False)}",
                        "$muted italic",
                    )
                )
    return Content("\n").join(parts)


def subagent_answer(
    result: ToolResult | None, is_error: bool, expanded: bool
) -> MarkdownPart | None:
    """A finished subagent's answer: the Markdown its model wrote, its first lines folded."""
    if result is None or is_error:
        return None
    text = result.text_content.strip()
    if not text:
        return None
    return markdown_head(text, EXPANDED_LINES if expanded else COLLAPSED_LINES, expanded)


def status_line(state: dict[str, Any], finished: bool, expanded: bool) -> Content:
    """``explore · read src/app.py · 1.2k tokens · 3.4s``."""
    agent = one_line(str(state.get("agent") or "agent"))
    pieces = [agent]
    tool = state.get("tool")
    if not finished:
        pieces.append(one_line(str(tool)) if tool else _doing(state))
    uses = state.get("tool_uses")
    if finished and isinstance(uses, int) and uses:
        pieces.append(f"{uses} tool use{'s' if uses != 1 else ''}")
    tokens = state.get("tokens")
    if isinstance(tokens, int):
        pieces.append(f"{_count(tokens)} tokens")
    elapsed = state.get("elapsed_s")
    if isinstance(elapsed, (int, float)):
        pieces.append(f"{elapsed:.1f}s")
    line = " · ".join(_clip(piece) for piece in pieces)
    if finished or state.get("transcript"):
        line += f"  {toggle_hint(expanded)}"
    return Content.styled(line, "$muted")


def _doing(state: dict[str, Any]) -> str:
    status = state.get("status")
    return "starting…" if status == "starting" else "working…"


def _transcript(state: dict[str, Any], answer: str | None) -> list[Content]:
    entries = state.get("transcript")
    if not isinstance(entries, list):
        return []
    if answer and entries and entries[-1] == ["text", answer]:
        entries = entries[:-1]  # the answer, drawn below the transcript as Markdown
    lines: list[Content] = []
    for entry in entries[-EXPANDED_ENTRIES:]:
        if not (isinstance(entry, list) and len(entry) == 2):
            continue
        kind, text = str(entry[0]), str(entry[1])
        if kind == "tool":
            lines.append(Content.assemble(("● ", "$tool-success"), _clip(one_line(text))))
        elif kind == "error":
            lines.append(Content.styled(_clip(one_line(text)), "$tool-error"))
        else:
            lines.append(Content("\n".join(_clip(line) for line in safe(text).splitlines())))
    return lines


def _count(tokens: int) -> str:
    return f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)


def _clip(text: str) -> str:
    return text if len(text) <= MAX_LINE_CHARS else text[: MAX_LINE_CHARS - 1] + "…"
