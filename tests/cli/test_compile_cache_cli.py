"""The real command keeps what it compiled (dataclass methods, patterns) in the cache
folder: written once the first reply has settled (a closed terminal skips the exit) and at
a print run's exit; a start after the first compiles no class again."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from picode.compile_cache.store import Store
from tests.cli.acp_client import FakeEditor, connect, new_session, point_at, prompt
from tests.cli.apis import AnthropicDriver, use
from tests.cli.harness import PicodeEnv
from tests.cli.terminal import Terminal
from tests.support import poll_until
from tests.wire.server import WireServer

API = AnthropicDriver()
KINDS = ("dataclasses", "patterns")


def cache_files(picode: PicodeEnv) -> list[Path]:
    return sorted((picode.home / "cache").glob("compiled-*.marshal"))


def test_a_print_run_writes_it_and_the_next_start_compiles_no_class_again(
    wire: WireServer, picode: PicodeEnv
) -> None:
    use(API, wire, picode)
    wire.enqueue(API.text("one"), API.text("two"), API.text("three"))
    for _ in range(2):  # the second start may still meet classes the first did not
        assert picode.run("-p", "hello", "--model", API.model).returncode == 0
    [path] = cache_files(picode)
    before = Store(path, KINDS)
    assert before.keys("dataclasses") and before.keys("patterns")
    assert picode.run("-p", "hello", "--model", API.model).returncode == 0
    # Patterns may still come and go: the standard tokenizer's is built from a set, so its
    # text differs in every process.
    assert Store(path, KINDS).keys("dataclasses") == before.keys("dataclasses")


def test_the_tui_writes_it_once_the_first_reply_has_settled(
    tui: Callable[[], Terminal], wire: WireServer, picode: PicodeEnv
) -> None:
    wire.enqueue(API.text("Settled answer."))
    terminal = tui()
    terminal.type("hello")
    terminal.wait_for_text("Settled answer.")
    poll_until(lambda: cache_files(picode), 30, "the cache written with picode running")
    assert terminal.process.poll() is None


def test_a_cache_folder_that_cannot_be_read_or_made_costs_only_speed(
    wire: WireServer, picode: PicodeEnv
) -> None:
    use(API, wire, picode)
    (picode.home / "cache").write_text("a file where the folder should be")
    wire.enqueue(API.text("still answers"))
    result = picode.run("-p", "hello", "--model", API.model)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "still answers\n"


def test_rpc_mode_writes_it_once_the_first_run_has_ended(
    wire: WireServer, picode: PicodeEnv
) -> None:
    use(API, wire, picode)
    wire.enqueue(API.text("First answer."))
    child = picode.start("--mode", "rpc", "--model", API.model)
    try:
        child.send({"type": "prompt", "message": "hello"})
        assert child.response("prompt")["success"]
        child.event("agent_end")
        # Kept while picode runs on: saved at start-up's end, not only at its exit.
        poll_until(lambda: cache_files(picode), 30, "the cache written with picode running")
        assert child.process.poll() is None
    finally:
        child.stop()


def test_acp_mode_writes_it_once_a_first_run_has_ended(wire: WireServer, picode: PicodeEnv) -> None:
    api = point_at(wire, picode)
    wire.enqueue(api.text("First answer."))

    async def script() -> list[Path]:
        async with connect(picode, FakeEditor(), "--model", api.model) as (conn, _):
            session = await new_session(conn, picode.project)
            await prompt(conn, session.session_id, "hello")
            # Still connected: picode runs on.
            await asyncio.to_thread(
                poll_until, lambda: cache_files(picode), 30, "the cache written"
            )
            return cache_files(picode)

    assert asyncio.run(script())
