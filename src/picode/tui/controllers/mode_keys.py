"""shift+tab and /plan: the session's mode (approval policy or plan mode), one press at a
time (docs/tui.md, "Plan mode")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from picode.tui.widgets.notice import NoticeView

if TYPE_CHECKING:
    from picode.session.agent_session import AgentSession
    from picode.tui.controllers.model_keys import ModelKeysHost

MODE_LINE = "Mode: "
#: What each mode means, for the transcript line.
MODE_MEANINGS = {
    "all": "ask before edits and commands",
    "edits": "ask before edits",
    "never": "edits and commands run without asking",
    "plan": "plan mode: only reading runs until you approve a plan",
}


def mode_text(mode: str) -> str:
    return f"{MODE_LINE}{MODE_MEANINGS.get(mode, mode)}"


def cycle_mode(session: AgentSession, host: ModelKeysHost) -> None:
    """The next mode; a run of presses leaves one line saying where it ended."""
    report_mode(session.cycle_mode(), host)


def report_mode(mode: str, host: ModelKeysHost) -> None:
    text = mode_text(mode)
    entries = host.transcript.entries
    last = entries[-1] if entries else None
    if isinstance(last, NoticeView) and last.text.startswith(MODE_LINE):
        last.set_text(text, "info")
    else:
        host.report(text)
