"""``--mode rpc``: newline-delimited JSON commands on stdin, responses and events on stdout.

Every command gets exactly one ``{"type":"response","command":..,"success":..}`` line (with
the command's ``id`` echoed when given). ``prompt`` answers as soon as the prompt is accepted;
its progress arrives as events. Commands that wait (``compact``, ``wait_for_idle``) answer
when done while other commands keep being read, so ``abort`` always gets through.
Malformed input gets an error response, never a crash. See docs/cli.md for the protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, BinaryIO

from picode.agent.agent import AgentBusyError
from picode.modes.headless import Interrupts, after_first_run, open_session
from picode.modes.json_lines import TooDeepError, loads_line
from picode.modes.output import LineWriter
from picode.modes.rpc.approvals import RpcApprovals
from picode.modes.rpc.commands import BACKGROUND, HANDLERS, Handler, RpcError
from picode.modes.rpc.elicitations import RpcElicitations
from picode.modes.rpc.rewind import HANDLERS as REWIND_HANDLERS
from picode.modes.serialize import RedactedEvents
from picode.session.events import SaveFailed

if TYPE_CHECKING:
    from picode.session.agent_session import AgentSession

EXIT_OK, EXIT_ERROR = 0, 1


def run_rpc(options: Any, start_up_over: Callable[[], None] = lambda: None) -> int:
    """``start_up_over`` runs once the first run has ended (the launcher's caches of
    start-up's work let go then)."""
    return asyncio.run(_serve(options, start_up_over))


async def _serve(options: Any, start_up_over: Callable[[], None]) -> int:
    out = LineWriter()
    approvals = RpcApprovals(out.json)
    if options.approver is None:
        options.approver = approvals.ask
    session = await open_session(options)
    if session is None:
        return EXIT_ERROR
    session.set_plan_approver(approvals.ask_plan)
    server = RpcServer(session, out.json, approvals)
    elicitations = RpcElicitations(out.json)
    session.set_elicitor(elicitations.ask)
    server.handlers["elicit"] = elicitations.command
    events = RedactedEvents()

    def on_event(event: Any) -> None:
        server.follow(event)
        for payload in events.dicts(event):
            out.json(payload)
        _report_save_failure(event, out.json)

    session.subscribe(on_event)
    after_first_run(session, start_up_over)
    lines = read_lines_in_background(sys.stdin.buffer)
    # An interrupt ends the command loop as end of input does, but without waiting for work.
    interrupts = Interrupts(session, then=lambda: lines.put_nowait(None))
    interrupts.install()
    try:
        while (line := await lines.get()) is not None:
            await server.handle_line(line)
        if interrupts.signum is None:
            await server.drain()
    finally:
        interrupts.uninstall()
        await server.shutdown()
    return interrupts.exit_code or EXIT_OK


def _report_save_failure(event: Any, write: Callable[[dict[str, Any]], None]) -> None:
    """Besides its notice, a failed save is an ``error`` event: a client must not take
    the conversation for saved."""
    if isinstance(event, SaveFailed):
        write({"type": "error", "command": None, "error": event.text})


def read_lines_in_background(stream: BinaryIO) -> asyncio.Queue[str | None]:
    """Lines of ``stream`` (decoded leniently) on a queue; None at the end.

    A thread rather than ``connect_read_pipe``: stdin may be a pipe, a file or a terminal.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()

    def pump() -> None:
        try:
            for raw in stream:
                text = raw.decode("utf-8", errors="replace")
                loop.call_soon_threadsafe(queue.put_nowait, text)
        except (OSError, ValueError):
            pass
        finally:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, None)
            except RuntimeError:  # the loop is already closed: nobody is listening
                pass

    threading.Thread(target=pump, name="picode-rpc-stdin", daemon=True).start()
    return queue


#: Events that start more work after an agent_end (a retry, a compaction, a new run).
_STARTS = frozenset({"agent_start", "auto_retry_start", "compaction_start"})
#: How long a prompt waits for a run that already sent agent_end to wind down.
SETTLE_TIMEOUT_S = 5.0


class RpcServer:
    def __init__(
        self,
        session: AgentSession,
        write: Callable[[dict[str, Any]], None],
        approvals: RpcApprovals,
    ) -> None:
        self.session = session
        self.write = write
        self.approvals = approvals
        self.handlers: dict[str, Handler] = {**HANDLERS, **REWIND_HANDLERS}
        self.background = BACKGROUND
        self.tasks: set[asyncio.Task[Any]] = set()
        self.prompt_task: asyncio.Task[Any] | None = None
        #: agent_end was sent and nothing started since: the run is only winding down.
        self.settling = False

    def follow(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        if kind == "agent_end":
            self.settling = True
        elif kind in _STARTS:
            self.settling = False

    async def settled(self) -> bool:
        """After agent_end the session finishes its run (saving, checks) before it is idle:
        a client that prompts the moment it reads agent_end must not be told "busy"."""
        if not self.settling:
            return not self.busy
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wound_down(), SETTLE_TIMEOUT_S)
        return not self.busy

    async def _wound_down(self) -> None:
        task = self.prompt_task
        if task is not None and not task.done():
            await asyncio.wait([task])
        await self.session.wait_for_idle()

    @property
    def busy(self) -> bool:
        """Running, or a prompt accepted but not yet started."""
        pending = self.prompt_task is not None and not self.prompt_task.done()
        return pending or self.session.is_running

    async def handle_line(self, line: str) -> None:
        if not line.strip():
            return
        try:
            command = loads_line(line)
        except TooDeepError as exc:
            self.respond(None, "parse", error=str(exc))
            return
        except ValueError as exc:
            self.respond(None, "parse", error=f"invalid JSON: {exc}")
            return
        if not isinstance(command, dict):
            self.respond(None, "parse", error="a command must be a JSON object")
            return
        request_id = command.get("id")
        name = command.get("type")
        handler = self.handlers.get(name) if isinstance(name, str) else None
        if handler is None or not isinstance(name, str):
            known = ", ".join(sorted(self.handlers))
            shown = name if isinstance(name, str) else json.dumps(name)
            self.respond(request_id, str(shown), error=f"unknown command {shown}; known: {known}")
            return
        if name in self.background:
            self.spawn(self.run_command(handler, name, request_id, command))
        else:
            await self.run_command(handler, name, request_id, command)

    async def run_command(
        self, handler: Handler, name: str, request_id: Any, command: dict[str, Any]
    ) -> None:
        from picode.session.models import MissingApiKeyError

        try:
            data = await handler(self, command)
        except (RpcError, AgentBusyError, MissingApiKeyError, LookupError, ValueError) as exc:
            self.respond(request_id, name, error=_plain_message(exc))
        except Exception as exc:
            self.respond(request_id, name, error=f"{type(exc).__name__}: {exc}")
        else:
            self.respond(request_id, name, data=data, success=True)

    def respond(
        self,
        request_id: Any,
        command: str,
        *,
        data: Any = None,
        error: str = "",
        success: bool = False,
    ) -> None:
        response: dict[str, Any] = {"type": "response", "command": command, "success": success}
        if request_id is not None:
            response["id"] = request_id
        if success and data is not None:
            response["data"] = data
        if not success:
            response["error"] = error
        self.write(response)

    def spawn(self, work: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    def start_prompt(self, work: Awaitable[Any]) -> None:
        async def runner() -> None:
            try:
                await work
            except Exception as exc:
                # The run failed outside the model's reply (that one arrives as events).
                self.write({"type": "error", "command": "prompt", "error": _plain_message(exc)})

        self.prompt_task = self.spawn(runner())

    async def drain(self) -> None:
        """End of input: let accepted work finish before exiting."""
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)

    async def shutdown(self) -> None:
        self.approvals.reject_all("picode is shutting down")
        await self.session.close()
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.gather(*self.tasks, return_exceptions=True)


def _plain_message(exc: BaseException) -> str:
    # LookupError subclasses (KeyError) quote their text; show it as written.
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    return str(exc) or type(exc).__name__
