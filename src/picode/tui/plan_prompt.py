"""The plan prompt: the plan of ``exit_plan_mode`` and what to do with it (docs/tui.md,
"Plan mode").

y approve, edits run at once · e approve, each edit asked · f keep planning, then what to
change and Enter · Esc cancel: the run stops (plan mode stays). The plan is the model's
Markdown, drawn by ``MarkdownView`` (which makes untrusted text safe first); it scrolls
inside the prompt (↑ ↓ PgUp PgDn Home End) while the choices stay in sight. Keys arriving
before the prompt has been on screen for ``ARM_DELAY_S`` are ignored, as on the approval
prompt: they were typed for the editor.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

from textual import events, on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Input, Static

from picode.session.safety import PlanDecision, PlanRequest
from picode.tui.armed_prompt import ARM_DELAY_S, ArmedPrompt, consume, shown
from picode.tui.widgets.markdown import MarkdownView

_KEYS: tuple[tuple[str, str], ...] = (
    ("y", "approve, edits run at once"),
    ("e", "approve, ask before each edit"),
    ("f", "keep planning (say what to change, Enter)"),
    ("esc", "cancel"),
)


class PlanPrompt(ArmedPrompt[PlanDecision]):
    """Mount it, focus it, ``await prompt.ask()``. ``aborted`` is True after Esc."""

    DEFAULT_CSS = """
    PlanPrompt {
        height: auto;
        border: round $accent;
        padding: 0 1;
        background: $surface;
    }
    PlanPrompt #plan-title {
        color: $accent;
        text-style: bold;
        margin: 0 0 1 0;
    }
    PlanPrompt #plan-scroll {
        height: auto;
        max-height: 60vh;
        scrollbar-size-vertical: 1;
    }
    PlanPrompt #plan-feedback {
        display: none;
        height: 1;
        border: none;
        padding: 0;
        background: $surface;
    }
    PlanPrompt.-feedback #plan-feedback {
        display: block;
    }
    PlanPrompt.-feedback #plan-keys {
        display: none;
    }
    """

    def __init__(
        self,
        request: PlanRequest,
        *,
        clock: Callable[[], float] = time.monotonic,
        arm_delay: float = ARM_DELAY_S,
    ) -> None:
        super().__init__(
            clock=clock,
            arm_delay=arm_delay,
            id="plan-prompt",
            keys_id="plan-keys",
            scroll_id="plan-scroll",
        )
        self.request = request
        self.mode: Literal["choose", "feedback"] = "choose"
        self.feedback_input = Input(
            placeholder="What should change? (Enter to send)", id="plan-feedback"
        )

    def key_meanings(self) -> tuple[tuple[str, str], ...]:
        return _KEYS

    def compose(self) -> ComposeResult:
        yield Static("The plan — carry it out?", id="plan-title")
        yield VerticalScroll(
            MarkdownView(self.request.plan, classes="plan-body"), id="plan-scroll", can_focus=False
        )
        yield self.keys_line
        yield self.feedback_input

    # --- answering -----------------------------------------------------------------------

    def answer(self, decision: PlanDecision) -> None:
        self.settle(decision)

    def cancel(self, reason: str | None = None) -> None:
        """Close without stopping the run from here (the app is closing, or the run was
        aborted elsewhere)."""
        self.answer(PlanDecision("cancel"))

    def stop(self) -> None:
        """Esc, wherever it was pressed: cancel, and have the run stopped."""
        if self.decision is None:
            self.aborted = True
            self.answer(PlanDecision("cancel"))

    def on_key(self, event: events.Key) -> None:
        if self.decision is not None:
            return
        key = event.key
        if self.mode == "feedback":
            if key == "escape":
                consume(event)
                self.stop()
            return
        if self.scrolled(event) or key not in ("y", "e", "f", "escape"):
            return
        consume(event)
        if not self.is_armed:
            return
        if key == "y":
            self.answer(PlanDecision("approve", "never"))
        elif key == "e":
            self.answer(PlanDecision("approve", "edits"))
        elif key == "f":
            self.mode = "feedback"
            self.add_class("-feedback")
            self.feedback_input.focus()
        else:
            self.stop()

    @on(Input.Submitted, "#plan-feedback")
    def _feedback_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.answer(PlanDecision("feedback", feedback=event.value.strip() or None))


async def ask_plan(
    parent: Widget,
    request: PlanRequest,
    *,
    before: Widget | None = None,
    clock: Callable[[], float] = time.monotonic,
    arm_delay: float = ARM_DELAY_S,
    on_prompt: Callable[[PlanPrompt], None] | None = None,
) -> PlanDecision:
    """Mount a plan prompt in ``parent``, focus it, wait for the answer, remove it and
    give focus back to whatever had it."""
    prompt = PlanPrompt(request, clock=clock, arm_delay=arm_delay)
    async with shown(parent, prompt, before=before):
        if on_prompt is not None:
            on_prompt(prompt)
        return await prompt.ask()
