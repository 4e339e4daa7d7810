"""Questions the rpc client is asked (an approval, a plan, a server's request for input):
each goes out as an event with a ``request_id`` and waits for the command that answers it."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

Answer = TypeVar("Answer")


class PendingAnswers(Generic[Answer]):
    def __init__(
        self,
        kind: str,
        write: Callable[[dict[str, Any]], None],
        ids: Iterator[int] | None = None,
    ) -> None:
        self.kind = kind
        self.write = write
        #: The questions still waiting, by request id.
        self.futures: dict[str, asyncio.Future[Answer]] = {}
        self._ids = ids if ids is not None else itertools.count(1)

    def new_id(self) -> str:
        return f"{self.kind}-{next(self._ids)}"

    async def ask(self, request_id: str, event: dict[str, Any]) -> Answer:
        """Write ``event`` (its ``type`` first, then ``request_id``) and wait for the answer."""
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self.futures[request_id] = future
        self.write({"type": event["type"], "request_id": request_id, **event})
        try:
            return await future
        finally:
            # Also reached when the run is aborted and this wait is cancelled.
            self.futures.pop(request_id, None)

    def waiting(self, request_id: object) -> asyncio.Future[Answer]:
        """The unanswered question ``request_id``; LookupError names the ones there are."""
        future = self.futures.get(request_id) if isinstance(request_id, str) else None
        if future is None or future.done():
            known = ", ".join(self.futures) or "none"
            raise LookupError(f"no pending {self.kind} {request_id!r} (pending: {known})")
        return future

    def answer_all(self, answer: Answer) -> None:
        for future in self.futures.values():
            if not future.done():
                future.set_result(answer)
        self.futures.clear()
