"""Approvals without the TUI: print mode asks on the controlling terminal (stdin and stdout
may be pipes), and refuses with a reason the model can read when there is none."""

from __future__ import annotations

import asyncio
import os
import threading

from picode.ai.untrusted import one_line
from picode.session.safety import ApprovalDecision, ApprovalRequest, Approver

TTY_PATH = "/dev/tty"

NO_TERMINAL_REASON = (
    "approval is required, but picode runs without a terminal to ask on; "
    "run it interactively or without --approve"
)


def terminal_approver(tty_path: str = TTY_PATH) -> Approver:
    """Ask on ``tty_path``; deny when it cannot be opened."""

    async def approve(request: ApprovalRequest) -> ApprovalDecision:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[ApprovalDecision] = loop.create_future()

        def settle(decision: ApprovalDecision) -> None:
            if not future.done():
                future.set_result(decision)

        def ask() -> None:
            decision = _ask_on_terminal(tty_path, request)
            loop.call_soon_threadsafe(settle, decision)

        # A daemon thread, not the loop's executor: a question left unanswered when the
        # run is aborted must not keep the process alive at exit.
        threading.Thread(target=ask, name="picode-approval", daemon=True).start()
        return await future

    return approve


def _ask_on_terminal(tty_path: str, request: ApprovalRequest) -> ApprovalDecision:
    # Unbuffered bytes on one descriptor: a text-mode "r+" file needs a seekable stream, which
    # a terminal is not, and that refused every question.
    try:
        fd = os.open(tty_path, os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return ApprovalDecision("no", NO_TERMINAL_REASON)
    try:
        # The session spelled the preview out (picode.ai.untrusted.visible); the tool name
        # may come from an MCP server.
        why = f" (it changes {request.protected})" if request.protected else ""
        name = one_line(request.tool_name)
        who = request.asker or "picode"
        _write(fd, f"\n{who} wants to run {name}{why}:\n{request.preview}\n")
        if request.asked_by:
            _write(fd, f"({one_line(request.asked_by, 120)} asks each time)\n")
        if request.always_means:
            _write(fd, f"([a]lways: {one_line(request.always_means, 80)}, for this run)\n")
        if request.can_save:
            _write(fd, "([p]roject: the same, saved for this folder)\n")
        choices = " / ".join(
            word
            for word, offered in (
                ("[y]es", True),
                ("[a]lways", request.asked_by is None),
                ("[p]roject", request.can_save),
                ("[n]o", True),
            )
            if offered
        )
        while True:
            _write(fd, f"Allow? {choices} (optionally: n <reason>): ")
            answer = _read_line(fd)
            if answer is None:
                return ApprovalDecision("no", "the terminal closed before an answer")
            word, _, rest = answer.strip().partition(" ")
            choice = word.lower()
            if choice in ("y", "yes"):
                return ApprovalDecision("yes")
            if request.asked_by is None and choice in ("a", "always"):
                return ApprovalDecision("always")
            if request.can_save and choice in ("p", "project"):
                return ApprovalDecision("project")
            if choice in ("n", "no"):
                return ApprovalDecision("no", rest.strip() or None)
    except OSError:
        return ApprovalDecision("no", "the terminal could not be read")
    finally:
        os.close(fd)


def _write(fd: int, text: str) -> None:
    data = text.encode("utf-8", errors="replace")
    while data:
        data = data[os.write(fd, data) :]


def _read_line(fd: int) -> str | None:
    """One line typed on the terminal; None at its end (closed, or Ctrl+D on nothing)."""
    data = bytearray()
    while not data.endswith(b"\n"):
        chunk = os.read(fd, 1024)
        if not chunk:
            return data.decode("utf-8", errors="replace") if data else None
        data += chunk
    return data.decode("utf-8", errors="replace")
