"""Helpers shared by the TUI benches that measure one thing per fresh interpreter
(``tui_memory.py``, ``tui_resume.py``, ``tui_first_frame.py``, ``mcp_client.py``)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

TIMEOUT_S = 120.0

#: The real command: cli.main → launch → quick view → app, with the app's ``run`` wrapped to
#: run headless and quit on its first frame (the full configuration loads after it). The
#: wrapper imports the app module first; the process imports the same modules either way.
FIRST_FRAME_CLI = """
import sys
from picode import cli

# As the real command does before anything else loads (a build without it: nothing).
getattr(cli, "compile_once", lambda: None)()
from picode.tui import app as tui_app

interactive_run = tui_app.PicodeApp.run

def first_frame_only(self, *args, **kwargs):
    self.config.exit_after_first_frame = True
    return interactive_run(self, headless=True, size=(100, 30))

tui_app.PicodeApp.run = first_frame_only
from picode.cli import main
sys.exit(main([]))
"""


async def wait_for(condition: Any, what: str, poll: float = 0.002) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        await asyncio.sleep(poll)


async def painted(app: Any) -> None:
    """Returns once the app has drawn everything queued so far."""
    done = asyncio.Event()
    app.call_after_refresh(done.set)
    await asyncio.wait_for(done.wait(), TIMEOUT_S)


def bench_options(home: Path, cwd: Path, session: Path | None) -> Any:
    """SessionOptions on an isolated PICODE_HOME with a model no request is made to."""
    from picode.ai.models import Model, builtin_registry
    from picode.session.config.settings import Settings
    from picode.session.options import SessionOptions
    from picode.session.paths import resolve_paths
    from picode.tools import coding_tools

    model = Model(id="claude-bench", name="Bench", api="anthropic-messages", provider="anthropic")
    return SessionOptions(
        tools=coding_tools(cwd),
        cwd=cwd,
        paths=resolve_paths({"PICODE_HOME": str(home)}),
        settings=Settings(),
        registry=builtin_registry(),
        model=model,
        load_extensions=False,
        session=session if session is not None else "new",
    )


def sample_child(script: str, kind: str, home: Path, cwd: Path, session: Path | None) -> Any:
    """Run ``script --child kind ...`` and return the JSON its last line prints."""
    command = [sys.executable, script, "--child", kind, str(home), str(cwd), str(session)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{kind} sample failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])
