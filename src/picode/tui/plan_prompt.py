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

import asyncio
import time
from collections.abc import Callable
from typing import Literal

from textual import events, on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Input, Static

from picode.session.safety import PlanDecision, PlanRequest
from picode.tui.approval import ARM_DELAY_S
from picode.tui.widgets.markdown import MarkdownView

_KEYS: tuple[tuple[str, str], ...] = (
    ("y", "approve, edits run at once"),
    ("e", "approve, ask before each edit"),
    ("f", "keep planning (say what to change, Enter)"),
    ("esc", "cancel"),
)
_SCROLL_KEYS = {
    "up": "scroll_up",
    "down": "scroll_down",
    "pageup": "scroll_page_up",
    "pagedown": "scroll_page_down",
    "home": "scroll_home",
    "end": "scroll_end",
}


class PlanPrompt(Widget, can_focus=True):
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
        super().__init__(id="plan-prompt")
        self.request = request
        self._clock = clock
        self.arm_delay = arm_delay
        self.shown_at: float | None = None
        self.mode: Literal["choose", "feedback"] = "choose"
        self.decision: PlanDecision | None = None
        self.aborted = False
        self._future: asyncio.Future[PlanDecision] | None = None
        self.feedback_input = Input(
            placeholder="What should change? (Enter to send)", id="plan-feedback"
        )
        self._keys = Static(self._keys_content(armed=False), id="plan-keys")

    def compose(self) -> ComposeResult:
        yield Static("The plan — carry it out?", id="plan-title")
        yield VerticalScroll(
            MarkdownView(self.request.plan, classes="plan-body"), id="plan-scroll", can_focus=False
        )
        yield self._keys
        yield self.feedback_input

    def on_mount(self) -> None:
        self.call_after_refresh(self._start_clock)

    def _start_clock(self) -> None:
        self.shown_at = self._clock()
        if self.arm_delay <= 0:
            self._keys.update(self._keys_content(armed=True))
        else:
            self.set_timer(self.arm_delay, self._show_armed)

    def _show_armed(self) -> None:
        if self.is_armed:
            self._keys.update(self._keys_content(armed=True))
        else:
            self.set_timer(0.05, self._show_armed)

    @property
    def is_armed(self) -> bool:
        if self.shown_at is None:
            return False
        return self._clock() - self.shown_at >= self.arm_delay - 1e-9

    def _keys_content(self, *, armed: bool) -> Content:
        key_style = "bold $accent" if armed else "bold $text-muted"
        return Content(" · ").join(
            Content.assemble((key, key_style), " ", (meaning, "$text-muted"))
            for key, meaning in _KEYS
        )

    # --- answering -----------------------------------------------------------------------

    async def ask(self) -> PlanDecision:
        if self.decision is not None:
            return self.decision
        if self._future is None:
            self._future = asyncio.get_running_loop().create_future()
        return await asyncio.shield(self._future)

    def answer(self, decision: PlanDecision) -> None:
        if self.decision is not None:
            return
        self.decision = decision
        if self._future is not None and not self._future.done():
            self._future.set_result(decision)

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
                _consume(event)
                self.stop()
            return
        if key in _SCROLL_KEYS:
            _consume(event)
            scroll = self.query_one("#plan-scroll", VerticalScroll)
            getattr(scroll, _SCROLL_KEYS[key])(animate=False)
            return
        if key not in ("y", "e", "f", "escape"):
            return
        _consume(event)
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


def _consume(event: events.Key) -> None:
    event.stop()
    event.prevent_default()


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
    previous_focus = parent.app.focused
    await parent.mount(prompt, before=before)
    prompt.focus()
    if on_prompt is not None:
        on_prompt(prompt)
    try:
        return await prompt.ask()
    finally:
        prompt.cancel()
        await prompt.remove()
        if previous_focus is not None and previous_focus.is_attached:
            previous_focus.focus()
