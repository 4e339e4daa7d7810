"""shift+tab and ctrl+p: the thinking level and the model, one key press at a time."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from picode.ai.thinking import runs_at
from picode.tui.widgets.notice import NoticeView

if TYPE_CHECKING:
    from picode.session.agent_session import AgentSession
    from picode.tui.controllers.host import Reporter
    from picode.tui.widgets.transcript import Transcript

THINKING_LINE = "Thinking: "


if TYPE_CHECKING:
    # Only for the type checker: a Protocol class costs instructions to create, on
    # the way to the first frame.
    class ModelKeysHost(Reporter, Protocol):
        @property
        def transcript(self) -> Transcript: ...

        def notify(self, message: str, *, timeout: float | None = None) -> None:
            """A passing hint, not a line in the transcript."""
            ...


def cycle_thinking(session: AgentSession, host: ModelKeysHost) -> None:
    """The next level; a run of presses leaves one line saying where it ended."""
    _, note = runs_at(session.model, "high")
    session.cycle_thinking_level()
    label = session.thinking_label
    text = f"{THINKING_LINE}{label} — {note}" if note else f"{THINKING_LINE}{label}"
    entries = host.transcript.entries
    last = entries[-1] if entries else None
    if isinstance(last, NoticeView) and last.text.startswith(THINKING_LINE):
        last.set_text(text, "info")
    else:
        host.report(text)


def cycle_model(session: AgentSession, host: ModelKeysHost) -> None:
    """The next model with a key; a hint says so when there is none."""
    before = session.model.ref
    model = session.cycle_model(1)
    if model.ref == before:
        host.notify("No other model has an API key configured.", timeout=4)
    else:
        host.report(f"Model: {model.ref}")
