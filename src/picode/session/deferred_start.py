"""Start-up work that can wait for the first request: connecting MCP servers and the
checkpoint warm-up. Each takes the interpreter lock (the MCP SDK's import, reading the
project) while the provider's SDK is imported and the first request is built, and the
person waits for that request, not for them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from picode.agent.events import AgentEnd, AgentEvent, MessageStart
from picode.ai.types import AssistantMessage

if TYPE_CHECKING:
    from picode.agent.agent import Agent


class DeferredStart:
    """Work held until the provider is prepared with nothing asked, or until the first
    request is answered (its reply starts, or the run ends), whichever comes first."""

    def __init__(self) -> None:
        self._held: list[Callable[[], None]] | None = []

    @property
    def released(self) -> bool:
        return self._held is None

    def start(self, agent: Agent, work: Sequence[Callable[[], None]], defer: bool) -> None:
        """Run ``work`` now, or (``defer``) when released."""
        if not defer:
            self._held = None
            for item in work:
                item()
            return
        if self._held is not None:
            self._held.extend(work)
            agent.subscribe(self._on_agent_event)

    def provider_ready(self, *, running: bool) -> None:
        """The SDK is imported and its client built: with no request on its way, nothing
        is waited for now; with one, its reply releases the work."""
        if not running:
            self.release()

    def release(self) -> None:
        held, self._held = self._held, None
        for item in held or ():
            item()

    def _on_agent_event(self, event: AgentEvent) -> None:
        if self._held is not None and (
            isinstance(event, AgentEnd)
            or (isinstance(event, MessageStart) and isinstance(event.message, AssistantMessage))
        ):
            self.release()
