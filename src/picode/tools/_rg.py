"""Running ripgrep (the ``rg`` binary from the ``ripgrep`` wheel) line by line, abortably."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from picode.agent.tool import ToolError
from picode.ai.abort import AbortSignal
from picode.tools.rg_path import find_rg

#: Options every search shares: no user config, .gitignore honoured outside git repos too,
#: hidden files searched but never .git/, results in a stable order.
COMMON_ARGS = ("--no-config", "--no-require-git", "--hidden", "--sort=path")
EXCLUDE_GIT = "--glob=!.git"
#: rg's JSON lines can be as long as a minified file; longer ones are skipped.
_MAX_LINE_BYTES = 8 * 1024 * 1024
_MAX_STDERR_BYTES = 8192

#: The note every capped search result ends with.
MORE_RESULTS_NOTE = "[{count} more results not shown; narrow the pattern or raise limit]"


def rg_binary() -> str:
    found = find_rg()
    if found:
        return found
    raise ToolError(
        "ripgrep (rg) is not installed; install the `ripgrep` Python package (it ships the "
        "rg binary) or put rg on PATH."
    )


@dataclass(slots=True)
class RgOutcome:
    returncode: int
    stderr: str
    stopped_early: bool
    skipped_long_lines: int

    def error_text(self) -> str:
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        return "\n".join(lines[:10])


async def run_rg(
    args: list[str], cwd: Path, signal: AbortSignal, on_line: Callable[[bytes], bool]
) -> RgOutcome:
    """Run rg with ``args``; ``on_line`` gets each stdout line and returns False to stop rg.

    Raises ToolError when aborted.
    """
    binary = rg_binary()
    if signal.aborted:
        raise ToolError("Search aborted.")
    try:
        process = await asyncio.create_subprocess_exec(
            binary,
            *args,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=_MAX_LINE_BYTES,
        )
    except OSError as exc:
        raise ToolError(f"Cannot run {binary}: {exc.strerror or exc}.") from None
    assert process.stdout is not None
    assert process.stderr is not None
    unsubscribe = signal.add_callback(lambda _reason: _kill(process))
    stderr_task = asyncio.create_task(_read_capped(process.stderr))
    stopped = False
    skipped = 0
    try:
        while True:
            try:
                line = await process.stdout.readline()
            except ValueError:
                skipped += 1
                continue
            if not line:
                break
            # Once stopped, keep draining: the process can only be reaped when its pipe closes.
            if not stopped and not signal.aborted and not on_line(line):
                stopped = True
                _kill(process)
        returncode = await process.wait()
        stderr = await stderr_task
    except BaseException:
        _kill(process)
        stderr_task.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(process.communicate(), 2.0)
        raise
    finally:
        unsubscribe()
    if signal.aborted:
        raise ToolError("Search aborted.")
    return RgOutcome(returncode, stderr, stopped, skipped)


def _kill(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()


async def _read_capped(stream: asyncio.StreamReader) -> str:
    kept = bytearray()
    while chunk := await stream.read(65536):
        if len(kept) < _MAX_STDERR_BYTES:
            kept += chunk[: _MAX_STDERR_BYTES - len(kept)]
    return kept.decode("utf-8", "replace")
