"""Everything the app needs to start, decided before Textual draws anything.

The session itself is opened later (``open_session``), after the first frame: the app must
appear without waiting for the session, its tools or any provider SDK.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from picode import __version__
from picode.tui.themes import DEFAULT_THEME
from picode.tui.widgets.transcript import DEFAULT_MAX_ENTRIES

if TYPE_CHECKING:
    from picode.ai.models import Model
    from picode.session.agent_session import AgentSession
    from picode.session.config import NotificationSettings
    from picode.session.options import SessionOptions
    from picode.session.safety import ProjectTrust
    from picode.session.startup import Prepared, QuickView


@dataclass(slots=True)
class TuiConfig:
    #: Opens the session; given a session id or path, opens that one instead (the picker).
    open_session: Callable[..., Awaitable[AgentSession]]
    cwd: Path
    model: Model
    thinking: str = "off"
    theme: str = DEFAULT_THEME
    #: Where user themes (``themes/*.json``) live.
    config_dir: Path | None = None
    #: TOML mapping binding ids to keys, e.g. ``model_picker = "ctrl+l,f2"``.
    keymap_file: Path | None = None
    version: str = __version__
    clock: Callable[[], float] = time.monotonic
    #: Shown instead of the real cwd (snapshots pin it); None = the cwd, with ~ for home.
    cwd_label: str | None = None
    #: The git branch to show; None = read it from ``.git/HEAD``; "" = none.
    branch: str | None = None
    max_entries: int = DEFAULT_MAX_ENTRIES
    #: Import the provider SDK in the background after the first frame.
    warm_provider: bool = True
    #: Quit as soon as the first frame is drawn (start-up benchmark).
    exit_after_first_frame: bool = False
    #: Shown in the transcript under the welcome line (config problems and the like).
    warnings: list[str] = field(default_factory=list)
    #: Sent as the first prompt once the session is open.
    initial_prompt: str | None = None
    #: ``picode -r`` without an id: show the session picker before opening a session.
    pick_session: bool = False
    #: Where saved sessions live (the picker lists them); None: the default location.
    sessions_dir: Path | None = None
    #: Where ``/export`` writes without a folder; None: the session's folder.
    exports_dir: Path | None = None
    #: Where an image pasted with ctrl+v is kept; None: images are not pasted.
    pasted_dir: Path | None = None
    #: What the folder's ``.picode/`` holds that needs trust; None: nothing is asked.
    assess_trust: Callable[[], ProjectTrust] | None = None
    #: The trust settled before the first session opened (the person's answer included).
    trust: ProjectTrust | None = None
    #: ``[notifications]`` of the session's settings, known once it opens; None: defaults.
    notifications: NotificationSettings | None = None

    @classmethod
    def from_options(cls, options: SessionOptions, *, theme: str | None = None) -> TuiConfig:
        """The start-up path of ``deferred`` with the options already prepared (tests,
        benchmarks, embedding): each open gets its own copy, as ``prepare`` would give."""
        import dataclasses

        from picode.session.startup import Prepared, QuickView

        view = QuickView(
            cwd=options.cwd,
            model=options.model,
            thinking=options.thinking,
            theme=theme or options.settings.theme,
            config_dir=options.paths.config_dir,
            keymap_file=options.paths.keymap_file,
            sessions_dir=options.paths.sessions_dir,
            exports_dir=options.paths.exports_dir,
            pasted_dir=options.paths.pasted_dir,
            pick_session=options.session == "pick",
        )
        return cls.deferred(view, lambda _trust: Prepared(dataclasses.replace(options), []))

    @classmethod
    def deferred(
        cls, view: QuickView, prepare: Callable[[ProjectTrust | None], Prepared]
    ) -> TuiConfig:
        """A config for the first frame; the session options are prepared afterwards."""

        async def open_session(session: str | None = None) -> AgentSession:
            import asyncio

            from picode.session.agent_session import AgentSession

            prepared = await asyncio.to_thread(prepare, config.trust)
            config.notifications = prepared.options.settings.notifications
            if session is not None:
                prepared.options.session = session
            # MCP and the checkpoint warm-up wait for the provider's warm-up (session_opener).
            opened = await AgentSession.open(prepared.options, defer=config.warm_provider)
            # The app subscribes as soon as this returns: report the problems just after.
            loop = asyncio.get_running_loop()
            for error in prepared.errors:
                loop.call_soon(opened.notify, error, "error", "config")
            for warning in prepared.warnings:
                loop.call_soon(opened.notify, warning, "warning", "config")
            return opened

        config = cls(
            open_session=open_session,
            cwd=view.cwd,
            model=view.model,
            thinking=view.thinking,
            theme=view.theme or DEFAULT_THEME,
            config_dir=view.config_dir,
            keymap_file=view.keymap_file,
            sessions_dir=view.sessions_dir,
            exports_dir=view.exports_dir,
            pasted_dir=view.pasted_dir,
            pick_session=view.pick_session,
        )
        return config
