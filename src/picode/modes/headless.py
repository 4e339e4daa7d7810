"""``picode -p`` (print the final answer) and ``--mode json`` (print every event).

Exit codes: 0 done, 1 failed (the reason on stderr, with a hint for the usual causes),
130 interrupted by Ctrl+C (143 by SIGTERM). An interrupt aborts the run the same way Esc
does in the TUI: the connection is closed, finished messages are already in the session
file, and the aborted one is recorded as such.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable, Sequence
from typing import Any

from picode.agent.events import AgentEnd
from picode.ai.types import AssistantMessage
from picode.modes.output import LineWriter, warn
from picode.modes.serialize import RedactedEvents, session_header
from picode.session.events import (
    AutoRetryEnd,
    AutoRetryStart,
    CompactionEnd,
    CompactionStart,
    EditGuardAbort,
    Notice,
    RuleTriggered,
    SaveFailed,
)

EXIT_OK, EXIT_ERROR = 0, 1

#: Error texts meaning the server could not be reached at all (not a cut mid-answer).
UNREACHABLE = (
    "connection refused",
    "all connection attempts failed",
    "name or service not known",
    "nodename nor servname",
    "failed to resolve",
)
INTERRUPT_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def run_headless(
    options: Any, prompt: str, *, json_events: bool, attachments: Sequence[Any] = ()
) -> int:
    """``attachments``: content blocks after the prompt (``@path`` files, images)."""
    return asyncio.run(_run(options, prompt, json_events, attachments))


async def open_session(options: Any) -> Any:
    """Open a session or say why not (and return None)."""
    from picode.session.agent_session import AgentSession

    try:
        return await AgentSession.open(options)
    except (LookupError, ValueError, OSError) as exc:
        warn(str(exc))
        return None


def after_first_run(session: Any, chore: Callable[[], None]) -> None:
    """Run ``chore`` once, when the session's first run has ended: start-up's work (the
    SDK's import with the first request included) is over then, as the TUI counts it."""

    def on_event(event: Any) -> None:
        if isinstance(event, AgentEnd):
            unsubscribe()
            chore()

    unsubscribe = session.subscribe(on_event)


class Interrupts:
    """SIGINT/SIGTERM abort the session once; a second one exits at once (every finished
    message is already on disk, so nothing is lost by not waiting)."""

    def __init__(self, session: Any, then: Callable[[], None] | None = None) -> None:
        self.session = session
        self.then = then
        self.signum: int | None = None

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in INTERRUPT_SIGNALS:
            loop.add_signal_handler(signum, self._on_signal, signum)

    def uninstall(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in INTERRUPT_SIGNALS:
            loop.remove_signal_handler(signum)

    def _on_signal(self, signum: int) -> None:
        if self.signum is not None:
            warn("interrupted again; exiting now")
            os._exit(128 + signum)
        self.signum = signum
        self.session.abort()
        if self.then is not None:
            self.then()

    @property
    def exit_code(self) -> int | None:
        return None if self.signum is None else 128 + self.signum


async def _run(options: Any, prompt: str, json_events: bool, attachments: Sequence[Any]) -> int:
    from picode.agent.agent import AgentBusyError
    from picode.modes.terminal_approver import terminal_approver
    from picode.session.models import MissingApiKeyError

    if options.approver is None:
        options.approver = terminal_approver()
    session = await open_session(options)
    if session is None:
        return EXIT_ERROR
    out = LineWriter()
    interrupts = Interrupts(session)
    interrupts.install()
    if json_events:
        out.json(session_header(session))
        events = RedactedEvents()

        def on_event(event: Any) -> None:
            for payload in events.dicts(event):
                out.json(payload)
            # stdout is for the reading program; a person watching sees what went wrong.
            report_notice(event)

        session.subscribe(on_event)
    else:
        session.subscribe(report_progress)
    # A run [limits] stopped did not finish its work: the exit code says so. (Subscribed
    # after the reporter, which is the first listener and hears the opening's notices.)
    limited: list[Notice] = []

    def on_limit(event: Any) -> None:
        if isinstance(event, Notice) and event.source == "limits":
            limited.append(event)

    session.subscribe(on_limit)
    try:
        if await wait_for_mcp(session, interrupts):
            await session.prompt(prompt, attachments)
    except (MissingApiKeyError, AgentBusyError) as exc:
        warn(str(exc))
        return EXIT_ERROR
    finally:
        await session.close()
        interrupts.uninstall()
    if interrupts.exit_code is not None:
        warn(_saved_note("interrupted", session))
        return interrupts.exit_code
    code = _finish(session, out, print_text=not json_events)
    if limited and code == EXIT_OK:
        code = EXIT_ERROR
    if session.save_error is not None:
        warn(f"error: the conversation was not saved: {session.save_error}")
        return EXIT_ERROR
    return code


def _finish(session: Any, out: LineWriter, *, print_text: bool) -> int:
    last = next((m for m in reversed(session.messages) if isinstance(m, AssistantMessage)), None)
    if last is None:
        warn("the model sent no reply")
        return EXIT_ERROR
    if last.stop_reason == "error":
        warn(f"error: {last.error_message or 'unknown error'}")
        hint = error_hint(last.error_message or "", session)
        if hint:
            warn(f"hint: {hint}")
        return EXIT_ERROR
    if last.stop_reason == "aborted":
        warn(_saved_note("aborted", session))
        return EXIT_ERROR
    if last.stop_reason == "length":
        warn("warning: the answer stopped at the model's output limit")
    if print_text and last.text:
        out.text(last.text)
    return EXIT_OK


def _saved_note(what: str, session: Any) -> str:
    path = session.session_file_path
    return f"{what}; the conversation is saved in {path}" if path else what


def error_hint(message: str, session: Any) -> str | None:
    """A next step for the failures people hit most."""
    lowered = message.lower()
    model = session.model
    info = session.provider_info(model.provider)
    if message.startswith("401") or "unauthorized" in lowered or "api key" in lowered:
        variables = " or ".join(info.api_key_env) if info and info.api_key_env else None
        saved = f"the key saved with picode login {model.provider}"
        if variables:
            return (
                f"check {variables} (or api_key in [providers.{model.provider}] of config.toml,"
                f" or {saved})"
            )
        return (
            f"check the api_key / api_key_env of [providers.{model.provider}] in config.toml,"
            f" or {saved}"
        )
    if message.startswith("404"):
        url = session.base_url(model)
        return f"check the model id '{model.id}' and the base URL {url}"
    if any(sign in lowered for sign in UNREACHABLE):
        url = session.base_url(model)
        return f"is the server at {url} reachable?"
    return None


def report_progress(event: Any) -> None:
    """Print mode keeps stdout for the answer; what a person should know goes to stderr."""
    match event:
        case AutoRetryStart(attempt=attempt, max_attempts=most, delay_ms=delay, error=error):
            warn(f"{error} — retrying in {seconds(delay)} (attempt {attempt}/{most})")
        case AutoRetryEnd(success=False, final_error=error) if error:
            warn(f"giving up: {error}")
        case CompactionStart(reason=reason):
            warn(f"compacting the context ({reason})")
        case CompactionEnd(error=error) if error:
            warn(f"compaction failed: {error}")
        case RuleTriggered(rule=rule):
            warn(f"stream rule '{rule}' matched; retrying the turn with its reminder")
        case EditGuardAbort(path=path, reason=reason):
            warn(f"edit of {path} stopped early: {reason}")
        case Notice():
            report_notice(event)


async def wait_for_mcp(session: Any, interrupts: Interrupts) -> bool:
    """The model should see the MCP tools from the first turn: wait for the servers (each
    at most its timeout_s) and say which are missing. False when interrupted meanwhile."""
    waiting = asyncio.ensure_future(session.wait_for_mcp())
    interrupts.then = waiting.cancel
    try:
        await waiting
    except asyncio.CancelledError:
        if interrupts.signum is None:
            raise
    finally:
        interrupts.then = None
    if interrupts.signum is not None:
        return False
    for status in session.mcp_servers():
        if status.state not in ("ready", "disabled"):
            warn(f"MCP server '{status.name}' is {status.summary}")
    return True


def report_notice(event: Any) -> None:
    # A failed save is reported once more, last, with the exit code it causes.
    if isinstance(event, Notice) and event.level != "info" and not isinstance(event, SaveFailed):
        warn(f"{event.level}: {event.text}")


def seconds(milliseconds: int) -> str:
    value = milliseconds / 1000
    if value >= 10 or value == int(value):
        return f"{value:.0f} s"
    return f"{value:.3f}".rstrip("0").rstrip(".") + " s"
