"""One hook command: the event as JSON on stdin, a time limit, its output and exit code.

A hook is the person's own code (or a trusted project's), not the model's: it runs with
picode's environment and outside the commands' sandbox, as extensions do. It gets its own
process group, so a timeout or an Esc stops whatever it started too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass
from pathlib import Path

#: Bytes of stdout and of stderr kept from one hook; the rest is dropped (said so).
OUTPUT_LIMIT = 64 * 1024


@dataclass(frozen=True, slots=True)
class HookProcess:
    """What one command did. ``exit_code`` is None when it could not start or timed out."""

    command: str
    exit_code: int | None
    stdout: str
    stderr: str
    #: Why there is no exit code: it could not be started, or it ran out of time.
    failure: str | None = None


async def run_command(
    command: str, payload: bytes, *, cwd: Path, env: dict[str, str], timeout_s: float
) -> HookProcess:
    """Run ``command`` through the shell with ``payload`` on stdin; cancelling kills it."""
    starting = asyncio.ensure_future(
        asyncio.create_subprocess_shell(
            command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    )
    try:
        # Shielded: cancelled half-way, asyncio would kill the shell alone and leave what
        # it already started running.
        process = await asyncio.shield(starting)
    except OSError as exc:
        return HookProcess(command, None, "", "", f"could not be started: {exc.strerror or exc}")
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            _kill_group(await starting)
        raise
    try:
        stdout, stderr = await asyncio.wait_for(_talk(process, payload), timeout_s)
    except TimeoutError:
        _kill_group(process)
        await process.wait()
        return HookProcess(command, None, "", "", f"timed out after {timeout_s:g} s")
    except BaseException:
        _kill_group(process)
        raise
    return HookProcess(command, process.returncode, stdout, stderr)


async def _talk(process: asyncio.subprocess.Process, payload: bytes) -> tuple[str, str]:
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        # A hook that does not read its input must still be able to exit.
        process.stdin.write(payload)
        await process.stdin.drain()
    process.stdin.close()
    stdout, stderr = await asyncio.gather(_read(process.stdout), _read(process.stderr))
    await process.wait()
    return stdout, stderr


async def _read(stream: asyncio.StreamReader) -> str:
    kept = bytearray()
    dropped = 0
    while chunk := await stream.read(65536):
        room = OUTPUT_LIMIT - len(kept)
        kept += chunk[:room]
        dropped += max(0, len(chunk) - room)
    text = kept.decode("utf-8", errors="replace")
    return text + (f"\n… {dropped} more bytes not shown" if dropped else "")


def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signal.SIGKILL)
        else:  # no process groups (Windows): the shell itself
            process.kill()
