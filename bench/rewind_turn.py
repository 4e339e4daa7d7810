"""What checkpoints cost a turn (issue 30): a real AgentSession in a generated 10,000-file
repository, a turn whose model asks for one bash call that changes 10 files and then
answers, with checkpoints on and off, interleaved.

Run: ``python bench/rewind_turn.py [--files 10000] [--runs 12] [--latency 0.4]``.
The model is picode's scripted provider with ``--latency`` seconds before each reply's
first token (real models take 1–10 s; 0.4 s makes the ratio harsher, not kinder). Each run
is a fresh session over the same project and checkpoint store (the project's first
snapshot, which reads every file once, is taken before timing). Timed from ``prompt``:
- first token: the first reply's first delta (the checkpoint before the message is taken
  meanwhile, in the background);
- tool start: the bash call starts (it waits for that checkpoint);
- answer: the final reply has ended (what the person sees);
- prompt returns: after the checkpoint of what the agent left.
Target (issue 30): checkpoints add ≤ 10 % of the time the turn's own requests take.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _stats import Summary, fmt, machine, verdict
from checkpoints import generate, git
from picode.agent.events import MessageEnd, MessageUpdate, ToolExecutionStart
from picode.ai.models import builtin_registry
from picode.ai.providers.faux import FauxProvider, FauxToolCall, text_turn, tool_turn
from picode.ai.types import AssistantMessage
from picode.session.agent_session import AgentSession, SessionOptions
from picode.session.config.settings import Settings
from picode.session.paths import resolve_paths
from picode.tools import coding_tools

STEPS = ("first token", "tool start", "answer", "prompt returns")


async def one_turn(
    project: Path, home: Path, changed: list[Path], latency: float, enabled: bool
) -> dict[str, float]:
    command = " && ".join(f"echo edit >> {p.relative_to(project)}" for p in changed)
    faux = FauxProvider(
        [
            tool_turn(FauxToolCall("bash", {"command": command}), delay=latency, chunk_size=10**6),
            text_turn("Changed the ten files.", delay=latency, chunk_size=10**6),
        ]
    )
    settings = Settings()
    settings.checkpoints.enabled = enabled
    options = SessionOptions(
        cwd=project,
        paths=resolve_paths({"PICODE_HOME": str(home)}),
        settings=settings,
        registry=builtin_registry(),
        model=faux.model,
        tools=coding_tools(project),
        load_extensions=False,
    )
    session = await AgentSession.open(options)
    marks: dict[str, float] = {}
    started = 0.0

    def listen(event: Any) -> None:
        now = time.perf_counter() - started
        if isinstance(event, MessageUpdate) and event.event.type.endswith("_delta"):
            marks.setdefault("first token", now)
        elif isinstance(event, ToolExecutionStart):
            marks.setdefault("tool start", now)
        elif isinstance(event, MessageEnd) and isinstance(event.message, AssistantMessage):
            marks["answer"] = now  # the last reply's end: the one without a tool call

    session.subscribe(listen)
    started = time.perf_counter()
    await session.prompt("change the ten files")
    marks["prompt returns"] = time.perf_counter() - started
    await session.close()
    faux.close()
    return marks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--latency", type=float, default=0.4)
    args = parser.parse_args()
    rng = random.Random(30)
    with tempfile.TemporaryDirectory() as scratch:
        project, home = Path(scratch) / "project", Path(scratch) / "home"
        project.mkdir()
        files = generate(project, args.files, rng)
        git(project, "init", "-q")
        git(project, "add", "-A")
        git(project, "commit", "-q", "-m", "base")
        # The project's first snapshot reads every file once: not what a turn pays.
        asyncio.run(one_turn(project, home, rng.sample(files, 10), args.latency, True))
        samples: dict[bool, dict[str, list[float]]] = {
            on: {step: [] for step in STEPS} for on in (False, True)
        }
        for _ in range(args.runs):
            for on in (False, True):
                marks = asyncio.run(
                    one_turn(project, home, rng.sample(files, 10), args.latency, on)
                )
                for step in STEPS:
                    samples[on][step].append(marks[step])
    requests = 2 * args.latency
    print(machine())
    print(
        f"{args.files:,} files, 10 changed by one bash call; {args.runs} runs each; "
        f"model latency {args.latency * 1000:.0f} ms a request (2 requests a turn)\n"
    )
    print("| from `prompt` to | checkpoints off | checkpoints on | added | of the requests' time |")
    print("| --- | --- | --- | --- | --- |")
    worst = 0.0
    for step in STEPS:
        off, on = Summary.of(samples[False][step]), Summary.of(samples[True][step])
        added = on.median - off.median
        share = added / requests
        worst = max(worst, share) if step != "prompt returns" else worst
        print(f"| {step} | {fmt(off)} | {fmt(on)} | {added * 1000:+.1f} ms | {share:.1%} |")
    print(f"\ntarget ≤ 10 % of the requests' time until the answer: {verdict(worst <= 0.10)}")


if __name__ == "__main__":
    sys.exit(main())
