"""Opening the session once the first frame is up, and wiring the app to it: kept apart to
keep app.py small, and given the app only as the ``OpenerHost`` it needs."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from picode.tui.controllers.router import EventRouter, RouterHost
from picode.tui.controllers.warmup import freeze_long_lived_objects

if TYPE_CHECKING:
    from picode.session.agent_session import AgentSession
    from picode.session.mcp import ElicitationAnswer, ElicitationRequest
    from picode.tui.config import TuiConfig
    from picode.tui.controllers.approvals import ApprovalController
    from picode.tui.controllers.commands import CommandController
    from picode.tui.controllers.history import HistoryPager
    from picode.tui.controllers.notify import TerminalNotifier
    from picode.tui.controllers.submit import Submitter
    from picode.tui.controllers.trust import TrustController
    from picode.tui.controllers.warmup import ProviderWarmup
    from picode.tui.elicitation import Elicitations

log = logging.getLogger(__name__)


class OpenerHost(RouterHost, Protocol):
    """What opening a session sets up: the router and session it publishes, and the
    controllers that follow the session."""

    config: TuiConfig
    session: AgentSession | None
    router: EventRouter | None
    unsubscribers: list[Callable[[], None]]

    @property
    def submitter(self) -> Submitter: ...

    @property
    def trust_controller(self) -> TrustController: ...

    @property
    def commands(self) -> CommandController: ...

    @property
    def warmup(self) -> ProviderWarmup: ...

    @property
    def approvals(self) -> ApprovalController: ...

    @property
    def history(self) -> HistoryPager: ...

    @property
    def notifier(self) -> TerminalNotifier: ...

    @property
    def app(self) -> Any: ...

    def refresh_completion(self) -> None: ...

    def call_after_refresh(
        self, callback: Callable[..., Any], *args: Any, **kwargs: Any
    ) -> bool: ...


async def open_session(host: OpenerHost, spec: str | None, pick: bool | None) -> None:
    """Open the session (``spec``: "new" or an id/path; ``pick``: the picker first), and
    connect the app to it: events, warm-up, commands, approvals, history, footer."""
    config = host.config
    host.submitter.start_failed = False
    try:
        if config.assess_trust is not None and config.trust is None:
            config.trust = await host.trust_controller.settle()
        if config.pick_session if pick is None else pick:
            session = await host.commands.sessions.open_picked(
                config.open_session, config.sessions_dir
            )
        elif spec is not None:
            session = await config.open_session(spec)
        else:
            session = await config.open_session()
    except Exception as exc:
        log.debug("session failed to open", exc_info=True)
        host.submitter.session_failed(exc)
        host.warmup.started("session")
        return
    host.router = router = EventRouter(host)
    host.session = session
    host.unsubscribers.append(session.subscribe(router.handle))
    host.unsubscribers.append(session.subscribe(host.notifier.handle))
    if config.warm_provider:
        host.warmup.prepare(session)
        host.unsubscribers.append(host.warmup.follow(session))
    if session.extension_commands:
        # Without any, nothing to list: the controller checks again whenever it is used.
        host.commands.sync_extensions(session)
    host.approvals.attach(session)
    session.set_elicitor(_elicitor(host.app))
    host.history.show_tail()
    host.todo_panel.show(session.todos)  # a resumed session's list; then TodosChanged
    host.refresh_footer()
    host.call_after_refresh(freeze_long_lived_objects)
    host.call_after_refresh(host.warmup.started, "session")
    host.submitter.session_opened()
    # "/rev" typed while the session opened may now complete to one of its templates.
    host.refresh_completion()


def _elicitor(app: Any) -> Callable[[ElicitationRequest], Awaitable[ElicitationAnswer]]:
    """The app's forms for a server's questions, loaded with the first question: their
    widgets are needed neither for the first frame nor for the first answer."""
    forms: list[Elicitations] = []

    async def ask(request: ElicitationRequest) -> ElicitationAnswer:
        if not forms:
            from picode.tui.elicitation import Elicitations

            forms.append(Elicitations(app))
        return await forms[0].ask(request)

    return ask
