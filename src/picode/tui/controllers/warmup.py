"""Start-up work after the first frame: the provider SDK imported in the background so the
first request does not wait, its HTTP client built once the session is open, the same at
once for a provider chosen later, and long-lived objects kept out of the garbage
collector's way."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from picode.tui import gc_pause

if TYPE_CHECKING:
    from picode.ai.models import Model
    from picode.session.agent_session import AgentSession
    from picode.session.events import AnySessionEvent
    from picode.tui.widgets.status import StatusLine

log = logging.getLogger(__name__)

LOADING_TEXT = "Loading the {provider} provider… your message goes out when it is ready"


class WarmupHost(Protocol):
    """Where the work runs, and the line that says a message waits for it."""

    @property
    def status(self) -> StatusLine: ...

    def run_worker(self, work: Any, *args: Any, **kwargs: Any) -> Any: ...

    def set_timer(self, delay: float, callback: Callable[[], None]) -> Any: ...


class ProviderWarmup:
    """One background import per wire API, and a client built for the session's model.

    The SDK import holds the interpreter for a second or two; done in a worker thread it
    overlaps with the rest of start-up instead of following Enter. A message sent before
    it is done says so in the status line (no silent wait)."""

    def __init__(self, host: WarmupHost) -> None:
        self._host = host
        self._imported: dict[str, asyncio.Event] = {}
        #: What start-up still does before the garbage collector runs again (gc_pause.py).
        self._starting = {"sdk", "session"}

    def begin(self, api: str, *, warm: bool) -> None:
        """Right after the first frame, before anything else: a message typed now waits for
        the SDK longest. The collector paused at launch runs again once start-up is over,
        or after ``gc_pause.PAUSE_LIMIT_S`` at the latest (the trust question or the session picker
        may hold the session for as long as the person likes)."""
        if warm:
            self.start(api)
        else:
            self.started("sdk")
        self._host.set_timer(gc_pause.PAUSE_LIMIT_S, gc_pause.resume_collector)

    def started(self, part: str) -> None:
        """``part`` of start-up is over ("sdk": imported, or not warmed; "session": open, or
        failed to): with both, the collector paused at launch runs again."""
        self._starting.discard(part)
        if not self._starting:
            gc_pause.resume_collector()

    def start(self, api: str) -> None:
        """Import the SDK serving ``api`` (the model is known before the session opens)."""
        if api in self._imported:
            return
        self._imported[api] = asyncio.Event()
        self._run(self._import(api))

    def _run(self, work: Coroutine[Any, Any, None]) -> None:
        self._host.run_worker(work, group="warm-up", exit_on_error=False)

    def prepare(self, session: AgentSession) -> None:
        """The session's current provider: its SDK (unless under way) and its client."""
        api = session.model.api
        self.start(api)
        self._run(self._prepare(session, api))

    def follow(self, session: AgentSession) -> Callable[[], None]:
        """Prepare each provider the session switches to (``/model``, ``ctrl+p``) at once."""
        from picode.session.events import ModelChanged

        def on_event(event: AnySessionEvent) -> None:
            if isinstance(event, ModelChanged):
                self.prepare(session)

        return session.subscribe(on_event)

    def ready(self, api: str) -> bool:
        """False while the SDK for ``api`` is still being imported."""
        imported = self._imported.get(api)
        return imported is None or imported.is_set()

    def announce(self, model: Model) -> None:
        """A message goes out before its provider is loaded: say so until it is."""
        if self.ready(model.api):
            return
        text = LOADING_TEXT.format(provider=model.provider)
        self._host.status.set_notice(text)
        self._run(self._clear_when_ready(model.api, text))

    async def _import(self, api: str) -> None:
        from picode.ai.builder import import_provider
        from picode.ai.stream import provider_module

        module = provider_module(api)
        try:
            if module is not None:
                await import_provider(module)
                freeze_long_lived_objects()  # the SDK's modules: the largest set after start-up
        except Exception:  # the first request reports it properly
            log.debug("warming %s failed", module, exc_info=True)
        finally:
            self._imported[api].set()
            self.started("sdk")

    async def _prepare(self, session: AgentSession, api: str) -> None:
        await self._imported[api].wait()
        await session.prepare_provider()

    async def _clear_when_ready(self, api: str, text: str) -> None:
        await self._imported[api].wait()
        notice = self._host.status.notice
        if notice is not None and notice[0] == text:
            self._host.status.set_notice(None)


def freeze_long_lived_objects() -> None:
    """Modules, styles, the SDK and a resumed history live as long as the app: out of the
    collector's generations, a full collection mid-reply (80-150 ms with them) walks only
    what is new. Freezing stops nothing being freed by reference counting; the garbage it
    took along goes after the next run (``gc_pause.sweep_frozen_garbage``)."""
    gc_pause.freeze()
