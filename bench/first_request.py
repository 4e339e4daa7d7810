"""The first request after launch, per provider: the installed ``picode`` in a pty, a prompt
typed the moment the first frame shows, against the local wire-faithful test server.

    python bench/first_request.py [--runs 5] [--providers anthropic-messages,...]

Each run starts picode afresh (new home, new server script), waits for the prompt box of
the first frame, types ``hello`` and Enter at once, and times until the reply's first word
is written to the terminal. Reported: launch → first frame, Enter → first token and
launch → first token. The baseline, in the same run (alternating): a fresh
``python -c "import <sdk>"`` (and, for reference, of the provider module, which imports
the SDK plus the SDK types it uses); the target is ≤ that + 0.3 s, checked for both Enter → token
and launch → token (the first frame, about 0.25 s on an idle machine, comes before the
import starts by design, so launch → token includes it).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.cli.apis import DRIVERS, ApiDriver, use
from tests.cli.harness import PicodeEnv
from tests.cli.terminal import ENTER, Terminal
from tests.wire.server import WireServer

from _stats import Summary, fmt, machine, verdict
from picode.ai.stream import PROVIDER_MODULES

PICODE_COMMAND = [str(Path(sys.executable).parent / "picode")]
SDK_IMPORT = {
    "anthropic-messages": "import anthropic",
    "openai-responses": "import openai",
    "openai-completions": "import openai",
    "google-generative-ai": "from google import genai",
}
FIRST_WORD = "Zebrafish"
MARGIN_S = 0.3


def import_time(statement: str) -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", statement], check=True)
    return time.monotonic() - started


def one_run(api: ApiDriver, root: Path) -> tuple[float, float, float]:
    """(launch → first frame, Enter → first token, launch → first token)."""
    with WireServer() as wire:
        env = PicodeEnv(root)
        env.env.pop("NO_COLOR")
        use(api, wire, env)
        wire.enqueue(api.text(f"{FIRST_WORD} says hello.", " And more."))
        launched = time.monotonic()
        terminal = Terminal(
            ["--model", api.model], cwd=env.project, env=env.env, command=PICODE_COMMAND
        )
        try:
            terminal.render = False
            # The cursor cell styles the "A" apart: the rest of the prompt box text is one run.
            frame = terminal.wait_for_bytes("sk picode…".encode(), 0, timeout=60)
            since = len(terminal.output)
            terminal.send(b"hello")
            pressed = time.monotonic()
            terminal.send(ENTER)
            token = terminal.wait_for_bytes(FIRST_WORD.encode(), since, timeout=60)
        finally:
            terminal.close()
    return frame - launched, token - pressed, token - launched


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--providers", default=",".join(d.name for d in DRIVERS))
    args = parser.parse_args()
    chosen = [d for d in DRIVERS if d.name in args.providers.split(",")]
    print(machine(), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for api in chosen:
            baseline: list[float] = []
            module_import: list[float] = []
            frames: list[float] = []
            enter: list[float] = []
            launch: list[float] = []
            for run in range(args.runs):
                baseline.append(import_time(SDK_IMPORT[api.name]))
                module_import.append(import_time(f"import {PROVIDER_MODULES[api.name]}"))
                root = Path(tmp) / f"{api.name}-{run}"
                root.mkdir()
                frame, after_enter, total = one_run(api, root)
                frames.append(frame)
                enter.append(after_enter)
                launch.append(total)
            base = Summary.of(baseline)
            target = base.median + MARGIN_S
            after_enter, total = Summary.of(enter), Summary.of(launch)
            print(
                f"{api.name:21s} `{SDK_IMPORT[api.name]}` {fmt(base)} | provider module "
                f"import {fmt(Summary.of(module_import))} | first frame "
                f"{fmt(Summary.of(frames))} | Enter → token {fmt(after_enter)} "
                f"({verdict(after_enter.median <= target)}) | launch → token {fmt(total)} "
                f"({verdict(total.median <= target)}) | target import + 300 ms = "
                f"{target * 1e3:.0f} ms | n={args.runs}",
                flush=True,
            )


if __name__ == "__main__":
    main()
