"""``session/update`` notifications sent by one task, in the order they were made.

The agent loop never waits for the client's pipe, and a response that must follow its
updates (a prompt's end, a load's replay, a permission ask) waits for ``flush``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

log = logging.getLogger(__name__)


class Outbox:
    def __init__(self) -> None:
        self._queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    def start(self, conn: Any) -> None:
        self._task = asyncio.get_running_loop().create_task(self._send_all(conn))

    def put(self, session_id: str, update: Any) -> None:
        self._queue.put_nowait((session_id, update))

    async def flush(self) -> None:
        if self._task is not None and not self._task.done():
            await self._queue.join()

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _send_all(self, conn: Any) -> None:
        while True:
            session_id, update = await self._queue.get()
            try:
                await conn.session_update(session_id=session_id, update=update)
            except ConnectionError:
                log.info("client gone; session update dropped")
            except Exception:
                log.exception("could not send a session update")
            finally:
                self._queue.task_done()
