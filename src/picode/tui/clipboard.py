"""Copy to the clipboard two ways at once: OSC 52 through the terminal, and the platform's
clipboard tool. Neither can be relied on alone: OSC 52 depends on the terminal (and its
settings, and tmux's), the tools on the platform and a display; over SSH only OSC 52
reaches the local clipboard.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

TOOL_TIMEOUT_S = 3.0


class ClipboardHost(Protocol):
    """What is needed from the app: Textual's ``App.copy_to_clipboard`` (OSC 52)."""

    def copy_to_clipboard(self, text: str) -> None: ...


@dataclass(slots=True)
class ToolOutcome:
    used: str | None = None
    """The tool that copied the text, if any did."""
    failures: list[str] = field(default_factory=list)
    """One line per tool that was found but failed."""
    tried: list[str] = field(default_factory=list)


def candidate_tools(
    platform: str = sys.platform, env: Mapping[str, str] | None = None
) -> list[tuple[str, list[str]]]:
    """(name, command) in the order worth trying on ``platform``."""
    env = os.environ if env is None else env
    if platform == "darwin":
        return [("pbcopy", ["pbcopy"])]
    if platform in ("win32", "cygwin"):
        return [("clip.exe", ["clip.exe"])]
    wayland = ("wl-copy", ["wl-copy"])
    x11 = [
        ("xclip", ["xclip", "-selection", "clipboard"]),
        ("xsel", ["xsel", "--clipboard", "--input"]),
    ]
    ordered = [wayland, *x11] if env.get("WAYLAND_DISPLAY") else [*x11, wayland]
    # WSL: Windows' clip.exe is on PATH and reaches the Windows clipboard.
    return [*ordered, ("clip.exe", ["clip.exe"])]


def copy_with_tools(
    text: str,
    *,
    platform: str = sys.platform,
    env: Mapping[str, str] | None = None,
    timeout: float = TOOL_TIMEOUT_S,
) -> ToolOutcome:
    """Hand ``text`` to the first clipboard tool that is installed and succeeds.

    Safe to call from a worker thread.
    """
    outcome = ToolOutcome()
    search_path = (os.environ if env is None else env).get("PATH")
    data = text.encode("utf-16-le") if platform == "win32" else text.encode("utf-8")
    for name, command in candidate_tools(platform, env):
        binary = shutil.which(command[0], path=search_path)
        if binary is None:
            continue
        outcome.tried.append(name)
        problem = _run_tool([binary, *command[1:]], data, timeout, env)
        if problem is None:
            outcome.used = name
            return outcome
        outcome.failures.append(f"{name}: {problem}")
    return outcome


def _run_tool(
    command: list[str], data: bytes, timeout: float, env: Mapping[str, str] | None
) -> str | None:
    """None on success, else what went wrong."""
    # xclip and wl-copy fork a child that keeps serving the selection and inherits our
    # pipes: read its stderr from a file, never a pipe, or waiting would hang until the
    # clipboard changes hands.
    with tempfile.TemporaryFile() as errors:
        try:
            completed = subprocess.run(
                command,
                input=data,
                stdout=subprocess.DEVNULL,
                stderr=errors,
                timeout=timeout,
                env=None if env is None else dict(env),
                check=False,
            )
        except subprocess.TimeoutExpired:
            return f"no answer within {timeout:g} s"
        except OSError as exc:
            return exc.strerror or str(exc)
        if completed.returncode == 0:
            return None
        errors.seek(0)
        detail = errors.read(2000).decode("utf-8", "replace").strip().splitlines()
        return detail[0] if detail else f"exit status {completed.returncode}"


def copy_to_clipboard(
    app: ClipboardHost,
    text: str,
    *,
    platform: str = sys.platform,
    env: Mapping[str, str] | None = None,
) -> str:
    """Copy ``text`` via OSC 52 and a clipboard tool; returns a notice saying what worked."""
    osc52 = True
    try:
        app.copy_to_clipboard(text)
    except Exception:  # a closed terminal must not lose the tool attempt
        osc52 = False
    outcome = copy_with_tools(text, platform=platform, env=env)
    return describe(outcome, osc52=osc52, platform=platform)


async def copy_text(
    app: ClipboardHost,
    text: str,
    *,
    platform: str = sys.platform,
    env: Mapping[str, str] | None = None,
) -> str:
    """``copy_to_clipboard`` for the event loop: the clipboard tool runs in a thread (it may
    take up to ``TOOL_TIMEOUT_S``), OSC 52 is written from the loop as Textual requires."""
    osc52 = True
    try:
        app.copy_to_clipboard(text)
    except Exception:
        osc52 = False
    outcome = await asyncio.to_thread(copy_with_tools, text, platform=platform, env=env)
    return describe(outcome, osc52=osc52, platform=platform)


def describe(outcome: ToolOutcome, *, osc52: bool, platform: str = sys.platform) -> str:
    if outcome.used is not None:
        also = " and OSC 52" if osc52 else ""
        return f"Copied to the clipboard via {outcome.used}{also}."
    if outcome.failures:
        problems = "; ".join(outcome.failures)
        tools_note = f"the clipboard tool failed ({problems})"
    else:
        names = ", ".join(dict.fromkeys(name for name, _ in candidate_tools(platform)))
        tools_note = f"no clipboard tool found (looked for {names})"
    if osc52:
        return (
            "Copied via OSC 52 (terminal support varies; if nothing was copied, enable "
            f"clipboard access in the terminal); {tools_note}."
        )
    return f"Could not copy: the terminal could not be reached and {tools_note}."


class SelectionHost(ClipboardHost, Protocol):
    """What copying a selection needs from the app beyond OSC 52."""

    def notify(self, message: str, *, severity: Any = ...) -> None: ...


async def copy_selection(
    app: SelectionHost, text: str, clear: Callable[[], None], env: Mapping[str, str] | None
) -> None:
    """Copy ``text`` (the selection), clear the selection and say how it went."""
    notice = await copy_text(app, text, env=env)
    clear()
    app.notify(notice, severity="warning" if notice.startswith("Could") else "information")
