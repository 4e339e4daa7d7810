"""Settles the folder's trust before the first session opens, asking the person if need be."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from textual.screen import Screen

    from picode.session.paths import Paths
    from picode.session.safety import ProjectTrust
    from picode.tui.controllers.host import Reporter

log = logging.getLogger(__name__)

T = TypeVar("T")


if TYPE_CHECKING:
    # Only for the type checker: a Protocol class costs instructions to create, on
    # the way to the first frame.
    class TrustHost(Reporter, Protocol):
        async def push_screen_wait(self, screen: Screen[T]) -> T:
            """The person's answer: to be awaited in a worker."""
            ...


class TrustController:
    def __init__(
        self,
        host: TrustHost,
        *,
        assess: Callable[[], ProjectTrust],
        paths: Callable[[], Paths],
    ) -> None:
        self._host = host
        self._assess = assess
        self._paths = paths

    async def settle(self, *, ask_again: bool = False) -> ProjectTrust:
        """The folder's trust; the person answers when nothing valid was decided (or
        ``ask_again``: the /trust command)."""
        trust = await asyncio.to_thread(self._assess)
        for problem in trust.problems:
            self._host.report(problem, "warning")
        if not trust.items or trust.override or not (trust.needs_answer or ask_again):
            return trust
        # Only when asking: the dialog and the pick lists it shares with the pickers are
        # not needed on the way to the first answer in a folder with nothing to trust.
        from picode.session.safety import record_decision
        from picode.tui.trust_prompt import TrustScreen

        answer = await self._host.push_screen_wait(TrustScreen(trust))
        if answer == "later":
            return trust
        try:
            await asyncio.to_thread(record_decision, self._paths(), trust, answer)
        except OSError as exc:
            log.debug("trust decision not saved", exc_info=True)
            trust.decision = answer  # this run still follows the answer
            self._host.report(
                f"Could not remember the answer ({exc}); it applies to this run.", "error"
            )
        return trust
