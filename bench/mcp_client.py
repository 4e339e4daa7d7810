"""MCP: the first frame with three configured servers, and what picode adds to a tool call.

1. First frame: the real ``picode`` command (headless, quitting on its first frame as
   ``tui_first_frame.py`` does) with a ``config.toml`` naming three stdio MCP servers,
   against the same command with no servers; fresh interpreter per sample, runs
   interleaved. The servers connect only once the session opens, after the first frame,
   so the two should not differ.
2. One tool call: ``echo`` on a stdio MCP server (``_mcp_echo_server.py``) called through
   picode's ``McpTool.execute`` (session/mcp: connection, result conversion) against the
   same call on a bare SDK ``ClientSession`` to another process of the same server script.
   Batches alternate between the two so drift hits both alike.

    python bench/mcp_client.py [--runs 10] [--calls 200]

(Not ``mcp.py``: run from bench/, that name would hide the ``mcp`` package.)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _stats import Summary, fmt, iqr, machine
from _tui import FIRST_FRAME_CLI

SERVER = Path(__file__).with_name("_mcp_echo_server.py")
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def home_with(servers: int) -> str:
    home = tempfile.mkdtemp(prefix="picode-bench-mcp-")
    config = Path(home) / "config"
    config.mkdir()
    tables = [
        f"[mcp.servers.echo{n}]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([str(SERVER)])}\n"
        for n in range(servers)
    ]
    (config / "config.toml").write_text("\n".join(tables), encoding="utf-8")
    return home


def first_frame(home: str) -> float:
    env = {**ENV, "PICODE_HOME": home}
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", FIRST_FRAME_CLI], check=True, capture_output=True, env=env
    )
    return time.perf_counter() - start


def bench_first_frame(runs: int) -> None:
    cases = {"no MCP servers": home_with(0), "3 MCP servers configured": home_with(3)}
    for home in cases.values():
        first_frame(home)  # warm the file cache and .pyc files
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, home in cases.items():
            times[name].append(first_frame(home))
    baseline = Summary.of(times["no MCP servers"])
    print(f"\n### `picode` first frame, fresh interpreter each, {runs} interleaved runs\n")
    print("| what | median (min–max) | IQR | × no servers |")
    print("|---|---:|---:|---:|")
    for name, values in times.items():
        summary = Summary.of(values)
        print(f"| {name} | {fmt(summary)} | {iqr(summary)} ms | {summary.ratio(baseline):.2f} |")


async def bench_calls(calls: int, batches: int) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from picode.ai.abort import AbortController
    from picode.session.config.settings import McpServer
    from picode.session.mcp.manager import McpManager

    manager = McpManager(
        {"echo": McpServer(command=sys.executable, args=[str(SERVER)])}, Path.cwd(), lambda: None
    )
    manager.start()
    await manager.wait_settled()
    [tool] = [t for t in manager.tools() if t.tool == "echo"]
    signal = AbortController().signal
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    direct: list[float] = []
    picode: list[float] = []
    #: CPU seconds of this process per call, per batch: what the client side costs, and
    #: much less moved by a busy machine than wall time.
    direct_cpu: list[float] = []
    picode_cpu: list[float] = []
    with open(os.devnull, "w", encoding="utf-8") as quiet:  # noqa: ASYNC230  # not timed
        async with (
            stdio_client(params, errlog=quiet) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.list_tools()
            for _ in range(batches):
                cpu = time.process_time()
                for _ in range(calls):
                    start = time.perf_counter()
                    await session.call_tool("echo", {"text": "ping"})
                    direct.append(time.perf_counter() - start)
                direct_cpu.append((time.process_time() - cpu) / calls)
                cpu = time.process_time()
                for _ in range(calls):
                    start = time.perf_counter()
                    result = await tool.execute("call", {"text": "ping"}, signal, lambda _: None)
                    picode.append(time.perf_counter() - start)
                picode_cpu.append((time.process_time() - cpu) / calls)
                assert result.text_content == "ping", result
    await manager.close()
    base, ours = Summary.of(direct), Summary.of(picode)
    print(f"\n### One `echo` call over stdio, {batches} alternating batches of {calls} calls\n")
    print("| what | median (min–max) | IQR | × direct |")
    print("|---|---:|---:|---:|")
    print(
        f"| bare SDK `ClientSession.call_tool` | {fmt(base, 1e6, 'µs', 0)} | "
        f"{iqr(base, 1e6, 0)} µs | 1.00 |"
    )
    print(
        f"| picode `McpTool.execute` | {fmt(ours, 1e6, 'µs', 0)} | "
        f"{iqr(ours, 1e6, 0)} µs | {ours.ratio(base):.2f} |"
    )
    base_cpu, ours_cpu = Summary.of(direct_cpu), Summary.of(picode_cpu)
    print(f"| client CPU per call, bare SDK | {fmt(base_cpu, 1e6, 'µs', 0)} | | 1.00 |")
    print(
        f"| client CPU per call, picode | {fmt(ours_cpu, 1e6, 'µs', 0)} | | "
        f"{ours_cpu.ratio(base_cpu):.2f} |"
    )
    print(
        f"\npicode adds {(ours.median - base.median) * 1e6:.0f} µs of wall time and "
        f"{(ours_cpu.median - base_cpu.median) * 1e6:.0f} µs of CPU per call (medians)."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    print(machine())
    bench_first_frame(args.runs)
    asyncio.run(bench_calls(args.calls, batches=5))


if __name__ == "__main__":
    main()
