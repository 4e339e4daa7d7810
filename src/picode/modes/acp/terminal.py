"""bash in the editor's own terminal, when the client offers ``terminal/*``.

The person watches the command run where they work (the tool call embeds the terminal);
the model gets the output the editor kept and the exit status, worded as picode's own bash
tool words them. The editor runs and cleans up the process, so the limits of the
command's output and of what it leaves behind are the editor's.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

from acp import RequestError

from picode.agent.tool import BaseTool, OnUpdate, ToolError, ToolResult
from picode.ai.abort import AbortSignal
from picode.modes.acp.link import SessionLink
from picode.tools.bash import DEFAULT_TIMEOUT_S, DESCRIPTION, MAX_BYTES, BashParams, user_shell

#: Details key of the updates and result that carry the editor's terminal.
TERMINAL_ID = "terminal_id"
#: How long a killed command gets to report its exit before picode stops waiting.
KILL_WAIT_SECONDS = 5.0


class ClientTerminalBash(BaseTool):
    name = "bash"
    label = "Bash"
    description = DESCRIPTION
    params_model = BashParams

    def __init__(
        self,
        cwd: Path,
        link: SessionLink,
        default_timeout_s: float = DEFAULT_TIMEOUT_S,
        *,
        prelude: str = "",
    ) -> None:
        self.cwd = cwd
        self.link = link
        self.default_timeout_s = default_timeout_s
        #: Shell lines run before the command (``unset`` of the variables it must not see).
        self.prelude = prelude

    async def run(self, args: BashParams, signal: AbortSignal, on_update: OnUpdate) -> ToolResult:
        if not args.command.strip():
            raise ToolError("The command is empty.")
        if signal.aborted:
            raise ToolError("Aborted before the command started.")
        conn, session_id = self.link.conn, self.link.session_id
        try:
            created = await conn.create_terminal(
                session_id=session_id,
                command=user_shell(),
                # stdin is empty, as the tool's description promises the model.
                args=["-c", f"exec </dev/null\n{self.prelude}{args.command}"],
                cwd=str(self.cwd),
                output_byte_limit=MAX_BYTES,
            )
        except RequestError as exc:
            raise ToolError(f"The editor could not start the command: {exc}") from None
        terminal_id = created.terminal_id
        on_update(ToolResult([], {TERMINAL_ID: terminal_id}))
        try:
            reason, exit_status = await self._wait(
                terminal_id, signal, args.timeout or self.default_timeout_s
            )
            output = await conn.terminal_output(session_id=session_id, terminal_id=terminal_id)
        except RequestError as exc:
            raise ToolError(f"The editor's terminal failed: {exc}") from None
        finally:
            with contextlib.suppress(Exception):
                await asyncio.shield(
                    conn.release_terminal(session_id=session_id, terminal_id=terminal_id)
                )
        status = exit_status or output.exit_status
        timeout = args.timeout or self.default_timeout_s
        return _result(output, status, reason, timeout, terminal_id)

    async def _wait(
        self, terminal_id: str, signal: AbortSignal, timeout: float
    ) -> tuple[str | None, Any]:
        """Why the command was killed (None: it ended by itself) and its exit status."""
        conn, session_id = self.link.conn, self.link.session_id
        exited = asyncio.ensure_future(
            conn.wait_for_terminal_exit(session_id=session_id, terminal_id=terminal_id)
        )
        aborted = asyncio.Event()
        unsubscribe = signal.add_callback(lambda _reason: aborted.set())
        stop = asyncio.ensure_future(aborted.wait())
        try:
            done, _ = await asyncio.wait(
                {exited, stop}, timeout=timeout or None, return_when=asyncio.FIRST_COMPLETED
            )
            if exited in done:
                return None, exited.result()
            await conn.kill_terminal(session_id=session_id, terminal_id=terminal_id)
            await asyncio.wait({exited}, timeout=KILL_WAIT_SECONDS)
            status = exited.result() if exited.done() and not exited.cancelled() else None
            return ("aborted" if aborted.is_set() else "timeout"), status
        except BaseException:
            # Cancelled with the run (Esc): the command must not go on in the editor.
            with contextlib.suppress(Exception):
                await asyncio.shield(
                    conn.kill_terminal(session_id=session_id, terminal_id=terminal_id)
                )
            raise
        finally:
            unsubscribe()
            stop.cancel()
            exited.cancel()


def _result(
    output: Any, status: Any, reason: str | None, timeout: float, terminal_id: str
) -> ToolResult:
    parts = [output.output if output.output else "(no output)"]
    if output.truncated:
        parts.append("[Output truncated by the editor: showing its last part.]")
    code = status.exit_code if status is not None else None
    signal_name = status.signal if status is not None else None
    if reason == "timeout":
        parts.append(f"Command timed out after {timeout:g} s and was killed.")
    elif reason == "aborted":
        parts.append("Command aborted and killed.")
    elif signal_name:
        parts.append(f"Command killed by signal {signal_name}.")
    elif code:
        parts.append(f"Exit code: {code}")
    details = {
        "exit_code": code,
        "signal": signal_name,
        "truncated": bool(output.truncated),
        "timed_out": reason == "timeout",
        "aborted": reason == "aborted",
        TERMINAL_ID: terminal_id,
    }
    failed = reason is not None or bool(signal_name) or bool(code)
    return ToolResult.text("\n\n".join(parts), details, is_error=failed)
