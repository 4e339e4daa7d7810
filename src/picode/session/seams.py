"""What the session's own parts call back into, kept off the front ends' API.

The recovery planner needs a voice, a clock and the spend; extensions send messages, write
entries and show notices. Each gets this small object instead of the whole session, so
``AgentSession``'s public members stay what a front end uses: commands, ``subscribe`` and a
read-only view."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from picode.ai.types import AssistantMessage
from picode.session.events import AnySessionEvent


class SessionSeams:
    """``RecoveryHost`` and ``ExtensionSink`` at once, each member bound to the session."""

    __slots__ = (
        "_append_entry",
        "_emit",
        "_emit_soon",
        "_has_queued",
        "_notify",
        "_send_message",
        "_spend",
        "_todo_list",
        "_wait_retry",
    )

    def __init__(
        self,
        *,
        emit: Callable[[AnySessionEvent], Awaitable[None]],
        emit_soon: Callable[[AnySessionEvent], None],
        notify: Callable[[str, str, str | None], None],
        has_queued: Callable[[], bool],
        wait_retry: Callable[[int], Awaitable[bool]],
        spend: Callable[[AssistantMessage | None], dict[str, Any]],
        send_message: Callable[[str, str], None],
        append_entry: Callable[[str, Any], None],
        todo_list: Callable[[], str],
    ) -> None:
        self._emit = emit
        self._emit_soon = emit_soon
        self._notify = notify
        self._has_queued = has_queued
        self._wait_retry = wait_retry
        self._spend = spend
        self._send_message = send_message
        self._append_entry = append_entry
        self._todo_list = todo_list

    async def emit(self, event: AnySessionEvent) -> None:
        await self._emit(event)

    def emit_soon(self, event: AnySessionEvent) -> None:
        self._emit_soon(event)

    def notify(self, text: str, level: str = "info", source: str | None = None) -> None:
        self._notify(text, level, source)

    @property
    def has_queued_messages(self) -> bool:
        return self._has_queued()

    async def wait_retry(self, delay_ms: int) -> bool:
        return await self._wait_retry(delay_ms)

    def spend(self, reply: AssistantMessage | None) -> dict[str, Any]:
        return self._spend(reply)

    def send_message(self, text: str, deliver_as: str) -> None:
        self._send_message(text, deliver_as)

    def append_entry(self, custom_type: str, data: Any) -> None:
        self._append_entry(custom_type, data)

    def todo_list(self) -> str:
        return self._todo_list()
