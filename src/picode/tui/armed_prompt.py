"""What the approval prompt and the plan prompt share: an answer waited for, keys that work
only once the prompt has been on screen for ``ARM_DELAY_S`` (keys typed for the editor
before it appeared must not answer it), the key line that shows when they do, and a body
that scrolls while the choices stay in sight.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, Generic, TypeVar

from textual import events
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

ARM_DELAY_S = 0.3
SCROLL_KEYS = {
    "up": "scroll_up",
    "down": "scroll_down",
    "pageup": "scroll_page_up",
    "pagedown": "scroll_page_down",
    "home": "scroll_home",
    "end": "scroll_end",
}

Decision = TypeVar("Decision")


class ArmedPrompt(Widget, Generic[Decision], can_focus=True):
    """Subclasses say their keys (``key_meanings``) and compose ``keys_line`` and a
    ``VerticalScroll`` with the id ``scroll_id``."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        arm_delay: float = ARM_DELAY_S,
        id: str | None = None,
        keys_id: str,
        scroll_id: str,
    ) -> None:
        super().__init__(id=id)
        self._clock = clock
        self.arm_delay = arm_delay
        self.shown_at: float | None = None
        self.decision: Decision | None = None
        #: Esc was pressed: the run should stop.
        self.aborted = False
        self._future: asyncio.Future[Decision] | None = None
        self._scroll_id = scroll_id
        self.keys_line = Static(self._keys_content(armed=False), id=keys_id)

    def key_meanings(self) -> Sequence[tuple[str, str]]:
        raise NotImplementedError

    def on_mount(self) -> None:
        # The clock starts once the prompt has actually been drawn.
        self.call_after_refresh(self._start_clock)

    def _start_clock(self) -> None:
        self.shown_at = self._clock()
        if self.arm_delay <= 0:
            self.keys_line.update(self._keys_content(armed=True))
        else:
            self.set_timer(self.arm_delay, self._show_armed)

    def _show_armed(self) -> None:
        if self.is_armed:
            self.keys_line.update(self._keys_content(armed=True))
        else:  # a slow clock (or a test's fake one): look again shortly
            self.set_timer(0.05, self._show_armed)

    @property
    def is_armed(self) -> bool:
        if self.shown_at is None:
            return False
        return self._clock() - self.shown_at >= self.arm_delay - 1e-9  # float noise

    def _keys_content(self, *, armed: bool) -> Content:
        key_style = "bold $accent" if armed else "bold $text-muted"
        return Content(" · ").join(
            Content.assemble((key, key_style), " ", (meaning, "$text-muted"))
            for key, meaning in self.key_meanings()
        )

    async def ask(self) -> Decision:
        """Wait for the person's answer."""
        if self.decision is not None:
            return self.decision
        if self._future is None:
            self._future = asyncio.get_running_loop().create_future()
        return await asyncio.shield(self._future)

    def settle(self, decision: Decision) -> bool:
        """Take ``decision`` as the answer; False when there already was one."""
        if self.decision is not None:
            return False
        self.decision = decision
        if self._future is not None and not self._future.done():
            self._future.set_result(decision)
        return True

    def cancel(self, reason: str | None = None) -> None:
        """Close without an answer from the person (the run stopped elsewhere, the app is
        closing)."""
        raise NotImplementedError

    def scrolled(self, event: events.Key) -> bool:
        """A scrolling key scrolls the body (and is used up)."""
        if event.key not in SCROLL_KEYS:
            return False
        consume(event)
        scroll = self.query_one(f"#{self._scroll_id}", VerticalScroll)
        getattr(scroll, SCROLL_KEYS[event.key])(animate=False)
        return True


def consume(event: events.Key) -> None:
    event.stop()
    event.prevent_default()


@asynccontextmanager
async def shown(
    parent: Widget,
    prompt: ArmedPrompt[Any],
    *,
    before: Widget | None = None,
    closed: str | None = None,
) -> AsyncIterator[None]:
    """``prompt`` mounted in ``parent`` (before ``before`` if given) and focused; on the way
    out it is closed (``closed``: the reason when unanswered), removed, and focus goes back
    to whatever had it."""
    previous_focus = parent.app.focused
    await parent.mount(prompt, before=before)
    prompt.focus()
    try:
        yield
    finally:
        prompt.cancel(closed)
        await prompt.remove()
        if previous_focus is not None and previous_focus.is_attached:
            previous_focus.focus()
