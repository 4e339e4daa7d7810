"""What the sandbox costs a command, and Esc on a sandboxed one (issue 27).

Through picode's own bash tool code path (``BashTool.execute``, as the agent loop calls it):

- ``true`` sandboxed (bubblewrap, the policy as shipped: picode's folders read-only,
  secrets hidden, no network) against ``true`` unsandboxed, interleaved run by run; and
  the same two command lines started with ``subprocess.run``, to tell bwrap's own cost
  from picode's;
- Esc on a sandboxed ``sleep & sleep; wait``: abort → every sleep gone from /proc (the
  whole group: bwrap, its init, the shell and both sleeps), and abort → the tool returned;
  the same for an unsandboxed command as the baseline.

    python bench/sandbox.py [--runs 200] [--esc-runs 30]

Targets: sandboxed ``true`` ≤ 15 ms more than unsandboxed; Esc → dead ≤ 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.tools.helpers import sleeps_of

from _stats import Summary, fmt, iqr, machine, verdict
from picode.ai.abort import AbortController, AbortSignal
from picode.launch import sandbox_config
from picode.session.config.settings import Settings
from picode.session.paths import resolve_paths
from picode.tools.bash import BashTool
from picode.tools.sandbox import Sandbox, probe_mechanism


def _tools(project: Path) -> tuple[BashTool, BashTool]:
    config = sandbox_config(Settings(), resolve_paths())
    return BashTool(project), BashTool(project, sandbox=Sandbox(config))


async def _true(tool: BashTool) -> float:
    args = tool.validate({"command": "true"})
    started = time.perf_counter()
    result = await tool.execute("bench", args, AbortSignal(), lambda _r: None)
    elapsed = time.perf_counter() - started
    assert not result.is_error, result.text_content
    return elapsed


def _spawn(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True)
    return time.perf_counter() - started


async def _esc(tool: BashTool, marker: str) -> tuple[float, float]:
    controller = AbortController()
    args = tool.validate({"command": f"sleep {marker} & sleep {marker}; wait"})
    task = asyncio.create_task(tool.execute("bench", args, controller.signal, lambda _r: None))
    deadline = time.monotonic() + 10
    while len(sleeps_of(marker)) < 2:
        if time.monotonic() > deadline:
            raise RuntimeError("the sleeps did not start")
        await asyncio.sleep(0.002)
    await asyncio.sleep(0.02)
    pids = sleeps_of(marker)
    started = time.perf_counter()
    controller.abort("user")
    dead = returned = 0.0
    while not (dead and returned):
        # Only the known pids are looked at: a whole /proc scan takes milliseconds.
        if not dead and not any(_running(pid) for pid in pids):
            dead = time.perf_counter() - started
        if not returned and task.done():
            returned = time.perf_counter() - started
        await asyncio.sleep(0.0005)
    await task
    return dead, returned


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


async def bench(runs: int, esc_runs: int) -> None:
    found = probe_mechanism()
    if found.mechanism is None:
        raise SystemExit(f"no sandbox here: {found.problem}")
    with tempfile.TemporaryDirectory() as folder:
        plain, sandboxed = _tools(Path(folder))
        for tool in (plain, sandboxed):  # warm-up: first spawn, the watchdog
            await _true(tool)
        bare: list[float] = []
        confined: list[float] = []
        shell = ["bash", "-c", "true"]
        assert sandboxed.sandbox is not None
        argv = sandboxed.sandbox.wrap(shell, Path(folder))
        raw: dict[str, list[float]] = {"bash": [], "bwrap": []}
        for _ in range(runs):
            bare.append(await _true(plain))
            confined.append(await _true(sandboxed))
            raw["bash"].append(_spawn(shell))
            raw["bwrap"].append(_spawn(argv))
        base = os.getpid() % 500 + 2000
        esc: dict[str, list[tuple[float, float]]] = {"unsandboxed": [], "sandboxed": []}
        for run in range(esc_runs):
            esc["unsandboxed"].append(await _esc(plain, f"{base}.{run}1"))
            esc["sandboxed"].append(await _esc(sandboxed, f"{base}.{run}2"))
    b, s = Summary.of(bare), Summary.of(confined)
    print(machine())
    print(f"mechanism: {found.mechanism.kind} ({found.mechanism.program})")
    print(f"\n### `true` through BashTool.execute ({runs} runs each, interleaved)\n")
    print("| | median (min–max) | IQR | × baseline |")
    print("|---|---:|---:|---:|")
    print(f"| unsandboxed (baseline) | {fmt(b)} | {iqr(b)} | 1.00 |")
    print(f"| sandboxed | {fmt(s)} | {iqr(s)} | {s.ratio(b):.2f} |")
    rb, rs = Summary.of(raw["bash"]), Summary.of(raw["bwrap"])
    print(f"| `subprocess.run` of `bash -c true` | {fmt(rb)} | {iqr(rb)} | {rb.ratio(b):.2f} |")
    print(f"| `subprocess.run` of the same in bwrap | {fmt(rs)} | {iqr(rs)} | {rs.ratio(b):.2f} |")
    extra = (s.median - b.median) * 1e3
    print(f"\ndifference of medians: {extra:.1f} ms (target ≤ 15 ms: {verdict(extra <= 15)})")
    print(f"\n### Esc on `sleep & sleep; wait` ({esc_runs} runs each)\n")
    print("| | abort → all sleeps gone | abort → tool returned |")
    print("|---|---:|---:|")
    for name, samples in esc.items():
        dead = Summary.of([d for d, _ in samples])
        back = Summary.of([r for _, r in samples])
        print(f"| {name} | {fmt(dead)} | {fmt(back)} |")
    worst = Summary.of([d for d, _ in esc["sandboxed"]])
    print(
        f"\nsandboxed, Esc → dead median: {worst.median * 1e3:.1f} ms "
        f"(target ≤ 50 ms: {verdict(worst.median <= 0.05)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--esc-runs", type=int, default=30)
    args = parser.parse_args()
    asyncio.run(bench(args.runs, args.esc_runs))


if __name__ == "__main__":
    main()
