"""The Textual front end. Importing this package is cheap: Textual loads in ``run_tui``."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from picode.session.safety import ProjectTrust
    from picode.session.startup import Prepared, QuickView
    from picode.tui.app import PicodeApp


#: How long a lone ESC byte waits for the rest of a possible escape sequence.
ESCDELAY_MS = "10"


def run_tui(
    view: QuickView,
    prepare: Callable[[ProjectTrust | None], Prepared],
    *,
    assess_trust: Callable[[], ProjectTrust] | None = None,
    initial_prompt: str | None = None,
) -> int:
    """Run the interactive app until the person quits; returns the exit code.

    The first frame comes from ``view``; ``prepare`` (full configuration, model resolution,
    session options) runs after it, off the event loop, once the folder's trust is settled
    (``assess_trust``; the person is asked if need be)."""
    # Esc is also the first byte of every escape sequence, so Textual waits ESCDELAY ms to
    # tell them apart; its 100 ms default is felt on every interrupt. Terminals send a key's
    # sequence in one write, so 10 ms (tmux's own default since 3.5) is plenty. Read when
    # Textual is imported: set it first.
    os.environ.setdefault("ESCDELAY", ESCDELAY_MS)
    from picode.tui.gc_pause import pause_collector

    pause_collector()  # until the session is open and the SDK imported (warmup.py)
    from picode.tui.app import PicodeApp
    from picode.tui.callbacks import count_bound_methods_once
    from picode.tui.config import TuiConfig
    from picode.tui.terminal_keys import enable_alt_enter

    enable_alt_enter()
    count_bound_methods_once()
    config = TuiConfig.deferred(view, prepare)
    config.assess_trust = assess_trust
    config.initial_prompt = initial_prompt or None
    app = PicodeApp(config)
    app.run()
    return _finished(app)


def _finished(app: PicodeApp) -> int:
    """After the app has left the screen: what the person needs to come back, then the code."""
    if app.resume_hint:
        print(app.resume_hint)
    return app.return_code or 0
