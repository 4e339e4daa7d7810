"""``picode -p`` (print the final answer) and ``--mode json`` (print every event)."""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import Any

from picode.ai.types import AssistantMessage
from picode.modes.serialize import dumps, event_to_dict
from picode.session.events import AutoRetryStart, CompactionStart, Notice, RuleTriggered

EXIT_OK, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 130


def run_headless(options: Any, prompt: str, *, json_events: bool) -> int:
    return asyncio.run(_run(options, prompt, json_events))


async def open_session(options: Any) -> Any:
    """Open a session or print why not (and return None)."""
    from picode.session.agent_session import AgentSession

    try:
        return await AgentSession.open(options)
    except (LookupError, ValueError, OSError) as exc:
        print(f"picode: {exc}", file=sys.stderr)
        return None


async def _run(options: Any, prompt: str, json_events: bool) -> int:
    from picode.session.credentials import MissingApiKeyError

    session = await open_session(options)
    if session is None:
        return EXIT_ERROR
    loop = asyncio.get_running_loop()
    interrupted = False

    def interrupt() -> None:
        nonlocal interrupted
        interrupted = True
        session.abort()

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, interrupt)
    if json_events:
        file = session.recorder.ensure_file()
        header = dict(file.header) if file is not None else {"type": "session", "id": None}
        _write_line(dumps(header))
        session.subscribe(lambda event: _write_line(dumps(event_to_dict(event))))
    else:
        session.subscribe(_report_progress)
    try:
        await session.prompt(prompt)
    except MissingApiKeyError as exc:
        print(f"picode: {exc}", file=sys.stderr)
        return EXIT_ERROR
    finally:
        await session.close()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
    if interrupted:
        print("picode: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    last = next(
        (m for m in reversed(session.messages) if isinstance(m, AssistantMessage)), None
    )
    if last is None:
        print("picode: the model sent no reply", file=sys.stderr)
        return EXIT_ERROR
    if last.stop_reason == "error":
        print(f"picode: error: {last.error_message or 'unknown error'}", file=sys.stderr)
        return EXIT_ERROR
    if last.stop_reason == "aborted":
        return EXIT_INTERRUPTED
    if not json_events:
        text = last.text
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
    return EXIT_OK


def _write_line(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _report_progress(event: Any) -> None:
    """Print mode stays quiet on stdout; what a person should know goes to stderr."""
    match event:
        case AutoRetryStart(attempt=attempt, max_attempts=most, delay_ms=delay, error=error):
            print(
                f"picode: {error} — retrying in {delay / 1000:.0f} s ({attempt}/{most})",
                file=sys.stderr,
            )
        case CompactionStart(reason=reason):
            print(f"picode: compacting the context ({reason})", file=sys.stderr)
        case RuleTriggered(rule=rule):
            print(f"picode: stream rule '{rule}' fired; retrying the turn", file=sys.stderr)
        case Notice(level=level, text=text) if level != "info":
            print(f"picode: {level}: {text}", file=sys.stderr)
