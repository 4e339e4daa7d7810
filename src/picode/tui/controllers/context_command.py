"""``/context``: what fills the model's context window, part by part (the session measures,
``session/context_usage.py``; this lays it out)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from picode.ai.untrusted import one_line

if TYPE_CHECKING:
    from picode.session.agent_session import AgentSession
    from picode.session.context_usage import LargeResult

NOTE = (
    "Parts are estimates (about 4 characters a token); in use is what the last reply "
    "reported, with what came after it estimated. /compact frees room."
)


def context_lines(session: AgentSession) -> list[str | tuple[str, str]]:
    usage = session.context_usage()
    window = usage.window

    def share(tokens: int) -> str:
        if not window:
            return f"~{tokens:,}"
        fraction = tokens / window
        return f"~{tokens:,} ({fraction:.1%})" if fraction >= 0.001 else f"~{tokens:,} (<0.1%)"

    compaction = (
        f"compacts above ~{usage.compacts_at:,}"
        if usage.compacts_at is not None
        else "automatic compaction is off"
    )
    lines: list[str | tuple[str, str]] = [
        ("Model", f"{session.model.ref} · a window of {window:,} tokens"),
        ("In use", f"{share(usage.in_use)} · {compaction}"),
        "",
    ]
    lines += [(part.label, share(part.tokens)) for part in usage.shares if part.tokens]
    lines.append(("free", share(max(window - usage.in_use, 0))))
    if usage.largest:
        lines += ["", ("Largest results", " · ".join(map(_result, usage.largest)))]
    return [*lines, "", NOTE]


def _result(result: LargeResult) -> str:
    from picode.tui.widgets.tool_render import key_argument

    argument = key_argument(result.tool, result.arguments) or ""
    return one_line(f"{result.tool} {argument}".strip(), 48) + f" ~{result.tokens:,}"
