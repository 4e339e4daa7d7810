"""shift+tab and ctrl+p: the thinking level and the model, one key press at a time."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from picode.ai.thinking import runs_at
from picode.tui.widgets.notice import NoticeView

if TYPE_CHECKING:
    from picode.session.agent_session import AgentSession
    from picode.tui.widgets.transcript import Transcript

THINKING_LINE = "Thinking: "


def cycle_thinking(
    session: AgentSession, transcript: Transcript, report: Callable[[str], None]
) -> None:
    """The next level; a run of presses leaves one line saying where it ended."""
    _, note = runs_at(session.model, "high")
    session.cycle_thinking_level()
    label = session.thinking_label
    text = f"{THINKING_LINE}{label} — {note}" if note else f"{THINKING_LINE}{label}"
    entries = transcript.entries
    last = entries[-1] if entries else None
    if isinstance(last, NoticeView) and last.text.startswith(THINKING_LINE):
        last.set_text(text, "info")
    else:
        report(text)


def cycle_model(
    session: AgentSession, report: Callable[[str], None], hint: Callable[[str], None]
) -> None:
    """The next model with a key; ``hint`` says so when there is none."""
    before = session.model.ref
    model = session.cycle_model(1)
    if model.ref == before:
        hint("No other model has an API key configured.")
    else:
        report(f"Model: {model.ref}")
