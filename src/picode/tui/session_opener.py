"""Opening the session once the first frame is up, and wiring the app to it: part of the
app (it reaches into it as the app would), kept apart to keep app.py small."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from picode.tui.controllers.router import EventRouter
from picode.tui.controllers.warmup import freeze_long_lived_objects

if TYPE_CHECKING:
    from picode.tui.app import PicodeApp

log = logging.getLogger(__name__)


async def open_session(app: PicodeApp, spec: str | None, pick: bool | None) -> None:
    """Open the session (``spec``: "new" or an id/path; ``pick``: the picker first), and
    connect the app to it: events, warm-up, commands, approvals, history, footer."""
    config = app.config
    app.submitter.start_failed = False
    try:
        if config.assess_trust is not None and config.trust is None:
            config.trust = await app.trust_controller.settle()
        if config.pick_session if pick is None else pick:
            session = await app.commands.sessions.open_picked(
                config.open_session, config.sessions_dir
            )
        elif spec is not None:
            session = await config.open_session(spec)
        else:
            session = await config.open_session()
    except Exception as exc:
        log.debug("session failed to open", exc_info=True)
        app.submitter.session_failed(exc)
        return
    app.router = router = EventRouter(
        transcript=app.transcript,
        status=app.status,
        queue=app.queue,
        host=app,
        on_switched=app.session_switched,
        display_count=lambda: session.display_count,
        model_max_tokens=lambda: session.model.max_tokens,
    )
    app.session = session
    app.unsubscribers.append(session.subscribe(router.handle))
    if config.warm_provider:
        app.warmup.prepare(session)
        app.unsubscribers.append(app.warmup.follow(session))
    app.commands.sync_extensions(session)
    app.approvals.attach(session)
    app.history.show_tail()
    app.refresh_footer()
    app.call_after_refresh(freeze_long_lived_objects)
    app.submitter.session_opened()
