"""A real ACP client (the agent-client-protocol package) driving ``picode --mode acp``.

It records every ``session/update``, answers permission asks from a script, and can play
an editor's file system (buffers that differ from the disk).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.cli.apis import AnthropicDriver
from tests.cli.harness import PICODE, PicodeEnv
from tests.wire.server import WireServer

TIMEOUT = 60.0


@dataclass
class FakeEditorTerminal:
    """A terminal the fake editor started for picode (``terminal/create``)."""

    process: asyncio.subprocess.Process
    output: bytearray
    reader: asyncio.Future[None]


class FakeEditor:
    """Stands in for the editor at the client end of ACP: the callbacks picode calls."""

    def __init__(
        self, *, answers: list[str] | None = None, buffers: dict[str, str] | None = None
    ) -> None:
        self.updates: list[Any] = []
        self.changed = asyncio.Event()
        #: Option ids to pick, one per permission ask, in order.
        self.answers = list(answers or [])
        self.asked: list[Any] = []
        #: The options offered at each ask.
        self.options: list[list[Any]] = []
        #: The editor's buffers by absolute path (used when fs is declared).
        self.buffers = dict(buffers or {})
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.terminals: dict[str, FakeEditorTerminal] = {}
        self.commands: list[list[str]] = []
        self.released: list[str] = []

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update)
        self.changed.set()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: Any, **_: Any
    ) -> Any:
        from acp.schema import AllowedOutcome, RequestPermissionResponse

        self.asked.append(tool_call)
        self.options.append(list(options))
        chosen = self.answers.pop(0)
        outcome = AllowedOutcome(outcome="selected", option_id=chosen)
        return RequestPermissionResponse(outcome=outcome)

    async def read_text_file(self, session_id: str, path: str, **_: Any) -> Any:
        from acp import RequestError
        from acp.schema import ReadTextFileResponse

        self.reads.append(path)
        if path not in self.buffers:
            raise RequestError.resource_not_found(path)
        return ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id: str, path: str, content: str, **_: Any) -> Any:
        from acp.schema import WriteTextFileResponse

        self.writes.append((path, content))
        self.buffers[path] = content
        return WriteTextFileResponse()

    # --- the editor's terminals: real processes, output kept in memory -------------------

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        cwd: str | None = None,
        **_: Any,
    ) -> Any:
        from acp.schema import CreateTerminalResponse

        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        terminal_id = f"term-{len(self.terminals) + 1}"
        output = bytearray()

        async def collect() -> None:
            assert process.stdout is not None
            while chunk := await process.stdout.read(4096):
                output.extend(chunk)

        self.terminals[terminal_id] = FakeEditorTerminal(
            process, output, asyncio.ensure_future(collect())
        )
        self.commands.append([command, *(args or [])])
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        from acp.schema import WaitForTerminalExitResponse

        terminal = self.terminals[terminal_id]
        code = await terminal.process.wait()
        await terminal.reader
        return WaitForTerminalExitResponse(exit_code=code if code >= 0 else None)

    async def terminal_output(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        from acp.schema import TerminalOutputResponse

        terminal = self.terminals[terminal_id]
        return TerminalOutputResponse(output=terminal.output.decode(), truncated=False)

    async def kill_terminal(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        self.terminals[terminal_id].process.kill()

    async def release_terminal(self, session_id: str, terminal_id: str, **_: Any) -> Any:
        self.released.append(terminal_id)

    async def close_terminals(self) -> None:
        """Kill and reap what is still running, while the event loop is there to close the
        pipes (asyncio's process transports otherwise complain from a closed loop)."""
        for terminal in self.terminals.values():
            if terminal.process.returncode is None:
                terminal.process.kill()
            await terminal.process.wait()
            await terminal.reader
            terminal.process._transport.close()  # type: ignore[attr-defined]

    async def wait_until(self, found: Callable[[Any], bool]) -> Any:
        """The first update (recorded so far or still to come) for which ``found`` holds."""

        async def look() -> Any:
            while True:
                for update in self.updates:
                    if found(update):
                        return update
                self.changed.clear()
                await self.changed.wait()

        return await asyncio.wait_for(look(), TIMEOUT)

    async def wait_for(self, kind: str) -> Any:
        return await self.wait_until(lambda update: update.session_update == kind)

    def of_kind(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    def agent_text(self) -> str:
        return "".join(u.content.text for u in self.of_kind("agent_message_chunk"))


def point_at(wire: WireServer, picode: PicodeEnv) -> AnthropicDriver:
    api = AnthropicDriver()
    picode.env.update(api.environment(wire))
    return api


@asynccontextmanager
async def connect(
    picode: PicodeEnv,
    client: FakeEditor,
    *args: str,
    fs: bool = False,
    terminal: bool = False,
) -> AsyncIterator[Any]:
    """A fresh ``picode --mode acp``, initialized: the connection and the initialize answer
    (``fs``, ``terminal``: the client declares its file system, its terminals)."""
    from acp import PROTOCOL_VERSION, spawn_agent_process
    from acp.schema import ClientCapabilities, FileSystemCapabilities

    capabilities = ClientCapabilities(
        fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs), terminal=terminal
    )
    command, *rest = PICODE
    async with spawn_agent_process(
        client,  # type: ignore[arg-type]
        command,
        *rest,
        "--mode",
        "acp",
        *args,
        env=picode.env,
        cwd=picode.project,
    ) as (conn, _process):
        initialized = await asyncio.wait_for(
            conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities),
            TIMEOUT,
        )
        try:
            yield conn, initialized
        finally:
            await client.close_terminals()


async def new_session(conn: Any, project: Path) -> Any:
    return await asyncio.wait_for(conn.new_session(cwd=str(project), mcp_servers=[]), TIMEOUT)


async def prompt(conn: Any, session_id: str, text: str) -> Any:
    from acp import text_block

    return await asyncio.wait_for(
        conn.prompt(session_id=session_id, prompt=[text_block(text)]), TIMEOUT
    )
