"""``!cmd``: run a shell command with the bash tool, show it, and give it to the model.

The output goes into the context as a user message ("I ran `cmd`: ..."): appended at once
when picode is idle, queued as a follow-up while it works. ``!!cmd`` only shows the output.
Esc stops a running command (it is one of the interrupt chain's "popups").
"""

from __future__ import annotations

import itertools
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from picode.agent.tool import AgentTool, ToolResult
    from picode.ai.abort import AbortController
    from picode.session.agent_session import AgentSession
    from picode.tui.controllers.host import Reporter
    from picode.tui.widgets.status import StatusLine
    from picode.tui.widgets.tool_call import ToolCallView
    from picode.tui.widgets.transcript import Transcript

log = logging.getLogger(__name__)

_ids = itertools.count(1)


def parse_shell(text: str) -> tuple[str, bool] | None:
    """``!cmd`` → (cmd, add to context); ``!!cmd`` → (cmd, False); None when not a command."""
    if not text.startswith("!"):
        return None
    if text.startswith("!!"):
        return text[2:].strip(), False
    return text[1:].strip(), True


def shell_view(call_id: str, command: str, *, expanded: bool) -> ToolCallView:
    """How a ``!cmd`` shows: a bash call of the person's, folded like the model's."""
    from picode.tui.widgets.tool_call import ToolCallView

    view = ToolCallView(call_id, "bash", {"command": command}, expanded=expanded)
    view.add_class("-user-shell")
    return view


def resumed_shell_view(command: str, output: str, *, expanded: bool) -> ToolCallView:
    """A ``!cmd`` of a resumed session, as it looked when it ran."""
    from picode.agent.tool import ToolResult

    view = shell_view(f"user-shell-{next(_ids)}", command, expanded=expanded)
    view.set_result(ToolResult.text(output), False)
    return view


if TYPE_CHECKING:
    # Only for the type checker: a Protocol class costs instructions to create, on
    # the way to the first frame.
    class ShellHost(Reporter, Protocol):
        """Where a command shows, and the session its output goes to."""

        @property
        def transcript(self) -> Transcript: ...

        @property
        def status(self) -> StatusLine: ...

        @property
        def session(self) -> AgentSession | None: ...


class ShellRunner:
    def __init__(self, host: ShellHost, *, cwd: Path) -> None:
        self._host = host
        self.cwd = cwd
        self._running: set[AbortController] = set()

    def is_running(self) -> bool:
        return bool(self._running)

    def stop(self) -> bool:
        """Esc: stop every command still running."""
        if not self._running:
            return False
        for controller in list(self._running):
            controller.abort("user")
        return True

    # To Esc's chain (controllers/interrupt.py) a running command is an open popup.
    is_open = is_running
    close = stop

    async def run(self, command: str, add_to_context: bool) -> None:
        from picode.agent.tool import ToolResult
        from picode.ai.abort import AbortController

        # Folded like the model's tool output (ctrl+o expands): a long output is its tail.
        call_id = f"user-shell-{next(_ids)}"
        view = shell_view(call_id, command, expanded=self._host.transcript.tools_expanded)
        view.set_running()
        self._host.transcript.add(view)
        controller = AbortController()
        self._running.add(controller)
        # The spinner, the time and "esc to interrupt", unless picode's own run shows them.
        timing = not self._host.status.is_working
        if timing:
            self._host.status.start_working()
        tool = self._bash_tool()
        try:
            result = await tool.execute(
                call_id, tool.validate({"command": command}), controller.signal, view.set_partial
            )
        except Exception as exc:  # ToolError and friends: what went wrong is the output
            result = ToolResult.text(str(exc) or type(exc).__name__, is_error=True)
        finally:
            self._running.discard(controller)
            session = self._host.session
            idle = session is None or not session.is_running
            if timing and idle and not self._running:
                self._host.status.stop_working()
        view.set_result(result, result.is_error)
        if controller.signal.aborted:
            self._host.report(
                "Command stopped; its output was not added to the context.", "interrupted"
            )
            return
        if add_to_context:
            self._add_to_context(command, result)

    def _bash_tool(self) -> AgentTool:
        session = self._host.session
        found = session.tool("bash") if session is not None else None
        from picode.tools.bash import BashTool

        if isinstance(found, BashTool):
            return found.for_user()
        if found is not None:
            return found

        return BashTool(self.cwd)

    def _add_to_context(self, command: str, result: ToolResult) -> None:
        session = self._host.session
        if session is None:
            self._host.report("The session is not open yet; the output was not added.", "warning")
            return
        from picode.session.store import shell_run_text

        try:
            session.add_note(shell_run_text(command, result.text_content))
        except OSError as exc:
            self._host.report(f"Could not save the session: {exc}", "error")
