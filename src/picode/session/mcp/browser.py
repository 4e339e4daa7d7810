"""Opening the person's browser for an MCP login, when there is one to open."""

from __future__ import annotations

import os
import sys


def open_browser(url: str) -> bool:
    """Open ``url`` in a graphical browser; False when there is none (a terminal over ssh,
    a container): the URL is then only shown. A text browser is never started, as it would
    take over the terminal picode runs in."""
    graphical = sys.platform in ("darwin", "win32") or bool(
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )
    if not graphical:
        return False
    import webbrowser

    try:
        return webbrowser.open(url)
    except webbrowser.Error:
        return False
