"""bash: run a shell command in the working folder, in its own process group.

details: ``{"exit_code": int | None, "signal": str | None, "truncated": bool,
"full_output_path": str | None, "timed_out": bool, "aborted": bool, "total_bytes": int,
"total_lines": int, "sandbox_blocked"?: str}``. ``sandbox_blocked`` (present only when
the sandbox stopped the command) says what it blocked. ``exit_code`` is None when the shell
was killed by a signal (named in ``signal``). Partial results sent to ``on_update`` carry
the output tail so far and ``{"truncated", "full_output_path", "total_bytes",
"total_lines"}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal as signals
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import Field

from picode.agent.tool import BaseTool, OnUpdate, StrictParams, ToolError, ToolResult
from picode.ai.abort import AbortSignal
from picode.tools._files import format_size
from picode.tools._output import OutputCapture, prune_old_logs
from picode.tools._process import signal_group, terminate_group
from picode.tools._watchdog import WATCHDOG, Gate
from picode.tools.sandbox import Sandbox, how_to_allow

log = logging.getLogger(__name__)

MAX_LINES = 2000
MAX_BYTES = 50 * 1024
#: Without a timeout from the model (configurable: [bash] default_timeout_s).
DEFAULT_TIMEOUT_S = 600.0
UPDATE_INTERVAL_SECONDS = 0.1
#: After the group is dead the pipe should close at once; a detached process may keep it open.
_DRAIN_SECONDS = 1.0

DESCRIPTION = f"""\
Run a shell command in the working folder and return its output (stdout and stderr \
merged). stdin is empty, so interactive prompts get end-of-file: pass flags such as --yes \
or --no-pager instead. Output longer than {MAX_LINES} lines or {MAX_BYTES // 1024} kB is \
cut to its last part and the full output is saved to a file whose path is given. A non-zero \
exit code is reported. timeout (seconds, optional) stops the command; without it the command \
is stopped after a default limit (usually {DEFAULT_TIMEOUT_S:g} s). \
The command and everything it started, including background jobs, are stopped when it \
finishes, times out or is aborted; do not use it for servers meant to keep running."""


class BashParams(StrictParams):
    command: str = Field(description="The command line to run, as you would type it in a shell.")
    timeout: float | None = Field(
        default=None, gt=0, description="Seconds after which the command is killed."
    )


def user_shell() -> str:
    """$SHELL when it is bash, zsh or sh (their ``-c`` behaves alike), else bash or sh."""
    shell = os.environ.get("SHELL", "")
    if os.path.basename(shell) in {"bash", "zsh", "sh"} and os.access(shell, os.X_OK):
        return shell
    for candidate in ("/bin/bash", "/usr/bin/bash", "/bin/sh"):
        if os.access(candidate, os.X_OK):
            return candidate
    raise ToolError("No shell found: neither $SHELL, /bin/bash nor /bin/sh can be run.")


class ThrottledUpdates:
    """Calls ``on_update`` with a fresh rendering at most once per ``interval`` seconds,
    and always eventually after the last poke (a quiet command still shows its last lines)."""

    def __init__(
        self, on_update: OnUpdate, render: Callable[[], ToolResult], interval: float
    ) -> None:
        self._on_update = on_update
        self._render = render
        self._interval = interval
        self._loop = asyncio.get_running_loop()
        self._last = float("-inf")
        self._pending: asyncio.TimerHandle | None = None

    def poke(self) -> None:
        if self._pending is not None:
            return
        wait = self._last + self._interval - self._loop.time()
        if wait <= 0:
            self._emit()
        else:
            self._pending = self._loop.call_later(wait, self._emit)

    def _emit(self) -> None:
        self._pending = None
        self._last = self._loop.time()
        try:
            self._on_update(self._render())
        except Exception:
            log.exception("bash on_update listener failed")

    def cancel(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None


class BashTool(BaseTool):
    name = "bash"
    label = "Bash"
    description = DESCRIPTION
    params_model = BashParams

    def __init__(
        self,
        cwd: Path,
        *,
        shell: str | None = None,
        max_lines: int = MAX_LINES,
        max_bytes: int = MAX_BYTES,
        default_timeout_s: float = DEFAULT_TIMEOUT_S,
        sandbox: Sandbox | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.cwd = cwd
        #: Confines the command (docs/security.md, "Sandbox"); None runs it unconfined.
        self.sandbox = sandbox
        self.shell = shell
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        #: Applied when the model gives no timeout: a command that never ends must not
        #: hold the turn forever. 0 = no limit.
        self.default_timeout_s = default_timeout_s
        #: The commands' environment, built once by whoever composes the tools (the session
        #: leaves picode's keys out); None: picode's own.
        self.env: dict[str, str] | None = dict(env) if env is not None else None
        prune_old_logs()

    def for_user(self) -> BashTool:
        """This tool for ``!cmd`` typed by the user: unconfined unless the config says
        ``[sandbox] user_commands = true`` (the user typed it; the model did not)."""
        if self.sandbox is None or self.sandbox.config.user_commands:
            return self
        return BashTool(
            self.cwd,
            shell=self.shell,
            max_lines=self.max_lines,
            max_bytes=self.max_bytes,
            default_timeout_s=self.default_timeout_s,
        )

    async def run(self, args: BashParams, signal: AbortSignal, on_update: OnUpdate) -> ToolResult:
        if not args.command.strip():
            raise ToolError("The command is empty.")
        if not self.cwd.is_dir():
            raise ToolError(f"The working folder {self.cwd} does not exist.")
        if signal.aborted:
            raise ToolError("Aborted before the command started.")
        sandbox = self.sandbox if self.sandbox is not None and self.sandbox.active else None
        mark = await sandbox.prepare() if sandbox is not None else 0
        result, outcome = await self._execute(args, signal, on_update, sandbox)
        if sandbox is None or outcome != "failed":
            return result
        blocked = sandbox.blocked(result.text_content, self.cwd, mark)
        if blocked is None:
            return result
        return await self._escalate(args, signal, on_update, sandbox, blocked, result)

    async def _escalate(
        self,
        args: BashParams,
        signal: AbortSignal,
        on_update: OnUpdate,
        sandbox: Sandbox,
        blocked: str,
        result: ToolResult,
    ) -> ToolResult:
        """Ask once to run the command outside the sandbox; without anyone to ask, say what
        was blocked and how to allow it."""
        note = f"[The sandbox blocked {blocked}."
        escalate = sandbox.escalate
        choice = "unasked" if escalate is None else await escalate(args.command, blocked)
        if choice == "unasked":
            return _with_note(result, f"{note} To allow it, {how_to_allow(blocked)}.]", blocked)
        if choice == "no" or signal.aborted:
            return _with_note(
                result, f"{note} The user chose not to run it outside the sandbox.]", blocked
            )
        if choice == "network":
            sandbox.network_for_session = True
        again, _ = await self._execute(args, signal, on_update, None)
        note += " The user let it run outside the sandbox.]"
        return _with_note(again, note, blocked, first=True)

    async def _execute(
        self,
        args: BashParams,
        signal: AbortSignal,
        on_update: OnUpdate,
        sandbox: Sandbox | None,
    ) -> tuple[ToolResult, str]:
        """Run once; the outcome is "ok", "failed" (non-zero exit) or "stopped"."""
        shell = self.shell or user_shell()
        if shutil.which(shell) is None:
            raise ToolError(f"Cannot start {shell}: no such program.")
        argv = [shell, "-c", args.command]
        # Inside the sandbox bwrap dies with picode and takes its PID namespace along.
        watched = sandbox is None
        gate = Gate() if watched else None
        if sandbox is not None:
            argv = sandbox.wrap(argv, self.cwd)
        elif gate is not None:
            argv = gate.wrap(argv)
        capture = OutputCapture(self.max_lines, self.max_bytes)
        updates = ThrottledUpdates(
            on_update, lambda: self._partial(capture), UPDATE_INTERVAL_SECONDS
        )
        loop = asyncio.get_running_loop()
        try:
            # A protocol rather than create_subprocess_exec: on Python 3.11 Process.wait()
            # only returns once the pipes close, which a background job can delay forever.
            transport, command = await loop.subprocess_exec(
                lambda: CommandProtocol(capture, updates.poke),
                *argv,
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.DEVNULL if gate is None else gate.stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            if gate is not None:
                gate.close()
            raise ToolError(f"Cannot start {argv[0]}: {exc.strerror or exc}.") from None
        except BaseException:
            if gate is not None:
                gate.close()
            raise
        # start_new_session makes the shell (or bwrap) a session and group leader.
        pgid = transport.get_pid()
        if gate is not None:
            gate.started()
            WATCHDOG.watch(pgid)
            gate.open()
        stop = asyncio.Event()
        stop_reason: list[str] = []

        def on_abort(_reason: Any) -> None:
            if not stop_reason:
                stop_reason.append("aborted")
            # Signal at once, from the callback: Esc must not wait for the event loop.
            signal_group(pgid, signals.SIGTERM)
            stop.set()

        unsubscribe = signal.add_callback(on_abort)
        stopped = asyncio.create_task(stop.wait())
        leftovers = False
        try:
            waiters: set[asyncio.Future[Any]] = {command.exited, stopped}
            done, _ = await asyncio.wait(
                waiters,
                timeout=self._timeout(args),
                return_when=asyncio.FIRST_COMPLETED,
            )
            if not done and not stop_reason:
                stop_reason.append("timeout")
            # However the wait ended, nothing the command started may outlive the call.
            leftovers = await terminate_group(pgid)
            await command.exited
            await asyncio.wait({command.output_closed}, timeout=_DRAIN_SECONDS)
        except BaseException:
            signal_group(pgid, signals.SIGKILL)
            capture.close(keep_log=False)
            # Reap the shell if this task may still await (a cancel scope may refuse).
            with contextlib.suppress(BaseException):
                await asyncio.wait({command.exited}, timeout=_DRAIN_SECONDS)
            raise
        finally:
            if watched:
                WATCHDOG.forget(pgid)
            unsubscribe()
            stopped.cancel()
            updates.cancel()
            transport.close()
        returncode = transport.get_returncode()
        assert returncode is not None
        reason = stop_reason[0] if stop_reason else None
        result = self._final(capture, returncode, reason, self._timeout(args), leftovers)
        outcome = "stopped" if reason is not None else "failed" if returncode != 0 else "ok"
        return result, outcome

    def _partial(self, capture: OutputCapture) -> ToolResult:
        tail = capture.render()
        return ToolResult.text(
            tail.text,
            {
                "truncated": tail.truncated,
                "full_output_path": capture.log_path if tail.truncated else None,
                "total_bytes": capture.total_bytes,
                "total_lines": capture.total_lines,
            },
        )

    def _timeout(self, args: BashParams) -> float | None:
        if args.timeout is not None:
            return args.timeout
        return self.default_timeout_s or None

    def _final(
        self,
        capture: OutputCapture,
        returncode: int,
        reason: str | None,
        timeout: float | None,
        leftovers: bool,
    ) -> ToolResult:
        tail = capture.render()
        capture.close(keep_log=tail.truncated)
        parts = [tail.text if tail.text else "(no output)"]
        if tail.truncated:
            parts.append(
                f"[Output truncated: showing the last {tail.shown_lines} of "
                f"{capture.total_lines} lines ({format_size(capture.total_bytes)} in all). "
                + (
                    f"Full output: {capture.log_path}]"
                    if capture.log_path
                    else f"The full output was not kept: {capture.log_error or 'unknown'}.]"
                )
            )
        signal_name = _signal_name(-returncode) if returncode < 0 else None
        if reason == "timeout":
            parts.append(f"Command timed out after {timeout:g} s and was killed.")
        elif reason == "aborted":
            parts.append("Command aborted and killed.")
        elif returncode < 0:
            parts.append(f"Command killed by signal {signal_name}.")
        elif returncode != 0:
            parts.append(f"Exit code: {returncode}")
        if leftovers and reason is None:
            parts.append("[Processes the command left running in the background were stopped.]")
        details = {
            "exit_code": returncode if returncode >= 0 else None,
            "signal": signal_name,
            "truncated": tail.truncated,
            "full_output_path": capture.log_path if tail.truncated else None,
            "timed_out": reason == "timeout",
            "aborted": reason == "aborted",
            "total_bytes": capture.total_bytes,
            "total_lines": capture.total_lines,
        }
        is_error = reason is not None or returncode != 0
        return ToolResult.text("\n\n".join(parts), details, is_error=is_error)


class CommandProtocol(asyncio.SubprocessProtocol):
    """Feeds the command's merged output to the capture; reports exit and end of output."""

    def __init__(self, capture: OutputCapture, on_output: Callable[[], None]) -> None:
        loop = asyncio.get_running_loop()
        self.exited: asyncio.Future[None] = loop.create_future()
        self.output_closed: asyncio.Future[None] = loop.create_future()
        self._capture = capture
        self._on_output = on_output

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        self._capture.feed(data.encode() if isinstance(data, str) else data)
        self._on_output()

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if not self.output_closed.done():
            self.output_closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)


def _with_note(result: ToolResult, note: str, blocked: str, *, first: bool = False) -> ToolResult:
    text = result.text_content
    joined = f"{note}\n\n{text}" if first else f"{text}\n\n{note}"
    details = {**(result.details or {}), "sandbox_blocked": blocked}
    return ToolResult.text(joined, details, is_error=result.is_error)


def _signal_name(number: int) -> str:
    try:
        return signals.Signals(number).name
    except ValueError:
        return f"signal {number}"
