from __future__ import annotations

import asyncio
import os
import tracemalloc
from pathlib import Path

import pytest

from picode.agent.tool import ToolError, ToolResult
from picode.ai.abort import AbortController
from picode.tools.bash import BashTool, ThrottledUpdates, user_shell
from tests.tools.helpers import call, run, wait_until_group_gone

WAIT = 10.0


def test_output_and_exit_code_zero(tmp_path: Path) -> None:
    result = run(BashTool(tmp_path), command="echo out; echo err >&2; pwd")
    assert result.text_content == f"out\nerr\n{tmp_path}"
    assert not result.is_error
    assert result.details["exit_code"] == 0
    assert result.details["truncated"] is False
    assert result.details["full_output_path"] is None


def test_non_zero_exit_code_is_an_error(tmp_path: Path) -> None:
    result = run(BashTool(tmp_path), command="echo failing; exit 3")
    assert result.is_error
    assert result.text_content == "failing\n\nExit code: 3"
    assert result.details["exit_code"] == 3


def test_stdin_is_empty(tmp_path: Path) -> None:
    result = run(BashTool(tmp_path), command='cat; read answer; echo "got:[$answer]"')
    assert result.text_content == "got:[]"


def test_no_output_is_said_plainly(tmp_path: Path) -> None:
    assert run(BashTool(tmp_path), command="true").text_content == "(no output)"


def test_output_streams_through_on_update(tmp_path: Path) -> None:
    async def scenario() -> tuple[list[ToolResult], ToolResult]:
        updates: list[ToolResult] = []
        task = asyncio.create_task(
            call(
                BashTool(tmp_path),
                updates=updates,
                command="echo first; while [ ! -e go ]; do sleep 0.01; done; echo second",
            )
        )
        await wait_for(lambda: any(u.text_content == "first" for u in updates))
        (tmp_path / "go").touch()
        return updates, await asyncio.wait_for(task, WAIT)

    updates, result = asyncio.run(scenario())
    assert updates[0].text_content == "first"
    assert result.text_content == "first\nsecond"


def test_updates_are_throttled_but_the_last_one_arrives() -> None:
    async def scenario() -> list[str]:
        seen: list[str] = []
        counter = [0]

        def render() -> ToolResult:
            return ToolResult.text(str(counter[0]))

        throttle = ThrottledUpdates(lambda r: seen.append(r.text_content), render, 0.05)
        for _ in range(100):
            counter[0] += 1
            throttle.poke()
        await wait_for(lambda: len(seen) == 2)
        return seen

    assert asyncio.run(scenario()) == ["1", "100"]


def test_huge_output_keeps_a_bounded_tail_and_logs_everything(tmp_path: Path) -> None:
    size = 50 * 1024 * 1024
    tracemalloc.start()
    try:
        result = run(BashTool(tmp_path), command=f"yes 'output line 0123456789' | head -c {size}")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    details = result.details
    assert details["truncated"] is True
    assert details["total_bytes"] == size
    log_path = Path(details["full_output_path"])
    try:
        assert log_path.stat().st_size == size
        assert f"Full output: {log_path}" in result.text_content
        tail = result.text_content.split("\n\n")[0]
        assert len(tail.encode()) <= 50 * 1024
        line = "output line 0123456789\n"
        assert tail.split("\n")[-1] == line[: size % len(line)]
        assert peak < 4 * 1024 * 1024
    finally:
        log_path.unlink()


def test_many_short_lines_keep_the_last_2000(tmp_path: Path) -> None:
    result = run(BashTool(tmp_path), command="seq 1 5000")
    log_path = Path(result.details["full_output_path"])
    try:
        tail, note = result.text_content.split("\n\n")
        assert tail.split("\n") == [str(n) for n in range(3001, 5001)]
        assert "last 2000 of 5000 lines" in note
        assert log_path.read_text().split() == [str(n) for n in range(1, 5001)]
    finally:
        log_path.unlink()


async def start_and_read_pgid(
    tool: BashTool, command: str, controller: AbortController, timeout: float | None = None
) -> tuple[asyncio.Task[ToolResult], int]:
    """Start ``command`` (which must print ``$$`` first) and return its task and pgid."""
    updates: list[ToolResult] = []
    arguments: dict[str, object] = {"command": command}
    if timeout is not None:
        arguments["timeout"] = timeout
    task = asyncio.create_task(call(tool, controller.signal, updates, **arguments))
    await wait_for(lambda: any(u.text_content.strip() for u in updates))
    return task, int(updates[0].text_content.split()[0])


def test_abort_kills_sleep(tmp_path: Path) -> None:
    async def scenario() -> tuple[ToolResult, int]:
        controller = AbortController()
        task, pgid = await start_and_read_pgid(BashTool(tmp_path), "echo $$; sleep 100", controller)
        controller.abort()
        return await asyncio.wait_for(task, WAIT), pgid

    result, pgid = asyncio.run(scenario())
    assert wait_until_group_gone(pgid)
    assert result.is_error
    assert result.details["aborted"] is True
    assert "aborted" in result.text_content


def test_abort_kills_a_command_that_ignores_sigterm(tmp_path: Path) -> None:
    async def scenario() -> tuple[ToolResult, int]:
        controller = AbortController()
        task, pgid = await start_and_read_pgid(
            BashTool(tmp_path), "trap '' TERM; echo $$; sleep 100", controller
        )
        controller.abort()
        return await asyncio.wait_for(task, WAIT), pgid

    result, pgid = asyncio.run(scenario())
    assert wait_until_group_gone(pgid)
    assert result.details["signal"] == "SIGKILL"
    assert result.details["aborted"] is True


def test_timeout_kills_the_group(tmp_path: Path) -> None:
    async def scenario() -> tuple[ToolResult, int]:
        task, pgid = await start_and_read_pgid(
            BashTool(tmp_path), "echo $$; sleep 100", AbortController(), timeout=0.5
        )
        return await asyncio.wait_for(task, WAIT), pgid

    result, pgid = asyncio.run(scenario())
    assert wait_until_group_gone(pgid)
    assert result.is_error
    assert result.details["timed_out"] is True
    assert "timed out after 0.5 s" in result.text_content


@pytest.mark.parametrize(
    "command",
    [
        "echo $$; sleep 100 &",  # the background job keeps the output pipe open
        "echo $$; sleep 100 >/dev/null 2>&1 &",
    ],
)
def test_background_children_die_with_the_group(tmp_path: Path, command: str) -> None:
    async def scenario() -> ToolResult:
        return await asyncio.wait_for(call(BashTool(tmp_path), command=command), WAIT)

    result = asyncio.run(scenario())
    pgid = int(result.text_content.split()[0])
    assert wait_until_group_gone(pgid)
    assert result.details["exit_code"] == 0
    assert "background were stopped" in result.text_content


def test_abort_before_start_runs_nothing(tmp_path: Path) -> None:
    controller = AbortController()
    controller.abort()
    with pytest.raises(ToolError, match="Aborted"):
        asyncio.run(call(BashTool(tmp_path), controller.signal, command="touch marker"))
    assert not (tmp_path / "marker").exists()


def test_missing_working_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="does not exist"):
        run(BashTool(tmp_path / "gone"), command="true")


@pytest.mark.parametrize(
    ("shell", "expected"),
    [("/bin/sh", "/bin/sh"), ("/usr/bin/fish", "/bin/bash"), ("", "/bin/bash")],
)
def test_shell_choice(monkeypatch: pytest.MonkeyPatch, shell: str, expected: str) -> None:
    if not os.access(expected, os.X_OK):
        pytest.skip(f"{expected} is not installed")
    monkeypatch.setenv("SHELL", shell)
    assert user_shell() == expected


async def wait_for(condition: object, timeout: float = WAIT) -> None:
    assert callable(condition)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


def test_cancelling_the_call_kills_the_group(tmp_path: Path) -> None:
    async def scenario() -> int:
        task, pgid = await start_and_read_pgid(
            BashTool(tmp_path), "echo $$; sleep 100", AbortController()
        )
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return pgid

    assert wait_until_group_gone(asyncio.run(scenario()))


def test_the_full_output_log_is_capped_keeping_head_and_tail() -> None:
    from picode.tools._output import OutputCapture

    capture = OutputCapture(max_lines=10, max_bytes=100, log_cap=1000)
    for index in range(200):
        capture.feed(f"line {index:04d}\n".encode())  # 10 bytes a line, 2000 in all
    tail = capture.render()
    assert tail.truncated
    capture.close(keep_log=True)
    assert capture.log_path is not None
    log = Path(capture.log_path)
    try:
        data = log.read_bytes()
        assert data.startswith(b"line 0000\n")
        assert b"bytes left out: the log keeps the first" in data
        assert data.endswith(b"line 0199\n")
        assert len(data) < 2000
    finally:
        log.unlink()


def test_a_command_without_timeout_stops_at_the_default(tmp_path: Path) -> None:
    result = asyncio.run(
        asyncio.wait_for(call(BashTool(tmp_path, default_timeout_s=0.5), command="sleep 30"), WAIT)
    )
    assert result.details["timed_out"] is True
    assert "timed out after 0.5 s" in result.text_content


def test_an_unwritable_temp_folder_is_said_instead_of_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-folder"))
    result = run(BashTool(tmp_path), command="seq 1 5000")
    assert result.details["truncated"] is True
    assert "Full output: None" not in result.text_content
    assert "The full output was not kept: the full output could not be saved" in (
        result.text_content
    )


def test_old_logs_are_pruned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile
    import time

    from picode.tools._output import LOG_MAX_AGE_S, prune_old_logs

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    old = tmp_path / "picode-bash-old.log"
    new = tmp_path / "picode-bash-new.log"
    other = tmp_path / "someone-else.log"
    for path in (old, new, other):
        path.write_text("x")
    stale = time.time() - LOG_MAX_AGE_S - 60
    os.utime(old, (stale, stale))
    os.utime(other, (stale, stale))
    assert prune_old_logs() == 1
    assert not old.exists() and new.exists() and other.exists()


def test_output_reads_as_a_terminal_shows_it(tmp_path: Path) -> None:
    """Colours are dropped and a progress bar drawn with carriage returns reads as its last
    state: the model is not sent every state a terminal wrote over."""
    command = (
        r"printf '\033[31mred\033[0m and \033[1mbold\033[0m\n';"
        r"for p in 10 55 100; do printf '\rdownloading %s%%' $p; done; printf '\n';"
        r"printf 'long line\rshort\n';"
        r"printf 'crlf line\r\n\ttab kept\n'"
    )
    result = run(BashTool(tmp_path), command=command)
    assert result.text_content == (
        "red and bold\ndownloading 100%\nshortline\ncrlf line\n\ttab kept"
    )
