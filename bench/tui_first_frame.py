"""Time to the TUI's first frame, against ``python -c "import textual.app"`` (SPEC §8: ≤ 1.4×).

Each sample is a fresh interpreter (wall time of the whole process), so imports are cold
the same way they are when someone types ``picode``. Byte-code caching is switched on for
the samples (an installed package has its .pyc files), whatever PYTHONDONTWRITEBYTECODE
says. The app runs headless and quits as soon as its first frame is drawn; the session is
never opened (it is not needed for the first frame). Runs alternate between baseline and
app so drift on a shared machine hits both alike.

    python bench/tui_first_frame.py [--runs 15] [--with-options] [--instructions 3]
                                    [--installed 200]

``--installed N`` adds a case: the ``picode`` command in a project with N skills and N
prompt templates installed, half the user's (``~/.claude/skills``, ``<config>/prompts``) and
half the project's (``.agents/skills``, ``.claude/commands``).

``--with-options`` also times the path the CLI takes: building SessionOptions (settings,
model registry) before the app starts. ``--instructions N`` counts the instructions each
case executes under valgrind's callgrind (N runs each, about 15 s a run): a ratio that does
not move with the machine's load, where the wall-time ratio moves by ±0.1.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

from _stats import Summary, fmt, iqr, machine, verdict
from _tui import FIRST_FRAME_CLI

BASELINE = "import textual.app"

APP = """
import asyncio
from pathlib import Path
from picode.ai.models import Model
from picode.tui.app import PicodeApp
from picode.tui.config import TuiConfig

async def never():
    await asyncio.Event().wait()

model = Model(id="bench-model", name="Bench", api="anthropic-messages", provider="anthropic")
config = TuiConfig(open_session=never, cwd=Path.cwd(), model=model, exit_after_first_frame=True)
app = PicodeApp(config)
app.run(headless=True, size=(100, 30))
assert app.return_code == 0, app.return_code
"""

WITH_OPTIONS = """
import asyncio
from pathlib import Path
from picode.ai.models import builtin_registry
from picode.session.options import SessionOptions
from picode.session.config.settings import load_config
from picode.session.paths import resolve_paths
from picode.tui.app import PicodeApp
from picode.tui.config import TuiConfig

cwd = Path.cwd()
paths = resolve_paths()
registry = builtin_registry()
model = registry.models()[0]
options = SessionOptions(
    cwd=cwd, paths=paths, settings=load_config(paths, cwd).settings, registry=registry,
    model=model,
)
config = TuiConfig.from_options(options)
config.exit_after_first_frame = True
app = PicodeApp(config)
app.run(headless=True, size=(100, 30))
assert app.return_code == 0, app.return_code
"""


CLI = FIRST_FRAME_CLI

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
HOME = tempfile.mkdtemp(prefix="picode-bench-home-")
CLI_ENV = {**ENV, "PICODE_HOME": HOME}


#: Where a case runs, when not here with ENV / CLI_ENV: code → (environment, folder).
PLACES: dict[str, tuple[dict[str, str], str | None]] = {}


def installed(count: int) -> str:
    """``CLI`` again (another object, so it can run elsewhere), in a project holding
    ``count`` skills and ``count`` templates."""
    root = tempfile.mkdtemp(prefix="picode-bench-installed-")
    home, project, picode_home = (os.path.join(root, name) for name in ("home", "proj", "ph"))
    half = count // 2
    for folder, kind, n in (
        (os.path.join(home, ".claude", "skills"), "skill", half),
        (os.path.join(project, ".agents", "skills"), "skill", count - half),
        (os.path.join(picode_home, "config", "prompts"), "prompt", half),
        (os.path.join(project, ".claude", "commands"), "prompt", count - half),
    ):
        for index in range(n):
            name = f"{kind}-{os.path.basename(os.path.dirname(folder))}-{index}"
            if kind == "skill":
                os.makedirs(os.path.join(folder, name))
                path = os.path.join(folder, name, "SKILL.md")
            else:
                os.makedirs(folder, exist_ok=True)
                path = os.path.join(folder, f"{name}.md")
            with open(path, "w") as handle:
                handle.write(f"---\nname: {name}\ndescription: Does thing {index}.\n---\n")
                handle.write("Step one.\n" * 20)
    code = "\n" + CLI
    PLACES[code] = ({**ENV, "HOME": home, "PICODE_HOME": picode_home}, project)
    return code


def _place(code: str) -> tuple[dict[str, str], str | None]:
    return PLACES.get(code, (CLI_ENV if code is CLI else ENV, None))


def sample(code: str) -> float:
    start = time.perf_counter()
    env, cwd = _place(code)
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, env=env, cwd=cwd)
    return time.perf_counter() - start


VALGRIND = ("valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null")


def instructions(code: str) -> int:
    """Instructions the whole process executes, counted by valgrind (callgrind): unlike
    wall time, the same on a busy machine and a quiet one, within about 3 %."""
    env, cwd = _place(code)
    done = subprocess.run(
        [*VALGRIND, sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=True,
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"no instruction count from valgrind:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def count_instructions(cases: dict[str, str], runs: int) -> None:
    counts = {
        name: Summary.of([float(instructions(code)) for _ in range(runs)])
        for name, code in cases.items()
    }
    baseline = counts["baseline (import textual.app)"]
    print(f"\n### Instructions executed (valgrind --tool=callgrind, {runs} runs each)\n")
    print("| what | median, millions (min–max) | × baseline | target ≤ 1.40× |")
    print("|---|---:|---:|---|")
    for name, summary in counts.items():
        ratio = summary.median / baseline.median
        goal = "" if name.startswith("baseline") else verdict(ratio <= 1.40)
        print(
            f"| {name} | {summary.median / 1e6:,.0f} ({summary.low / 1e6:,.0f}–"
            f"{summary.high / 1e6:,.0f}) | {ratio:.2f} | {goal} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--with-options", action="store_true")
    parser.add_argument(
        "--instructions",
        type=int,
        default=0,
        metavar="N",
        help="also count instructions under valgrind, N runs per case (~15 s each)",
    )
    parser.add_argument("--installed", type=int, default=0, metavar="N")
    args = parser.parse_args()

    cases = {
        "baseline (import textual.app)": BASELINE,
        "app first frame": APP,
        "`picode` command first frame": CLI,
    }
    if args.with_options:
        cases["app first frame, options built eagerly"] = WITH_OPTIONS
    if args.installed:
        name = f"`picode` command, {args.installed} skills + {args.installed} templates"
        cases[name] = installed(args.installed)
    for code in cases.values():  # warm the OS file cache and .pyc files
        sample(code)
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.runs):
        for name, code in cases.items():
            times[name].append(sample(code))

    baseline = Summary.of(times["baseline (import textual.app)"])
    print(machine())
    print(
        f"\n### TUI first frame, fresh interpreter each, {args.runs} interleaved runs "
        "(whole-process wall time)\n"
    )
    print("| what | median (min–max) | IQR | × baseline | target ≤ 1.40× |")
    print("|---|---:|---:|---:|---|")
    for name, values in times.items():
        summary = Summary.of(values)
        ratio = summary.ratio(baseline)
        goal = "" if name.startswith("baseline") else verdict(ratio <= 1.40)
        print(f"| {name} | {fmt(summary)} | {iqr(summary)} ms | {ratio:.2f} | {goal} |")
    if args.instructions:
        count_instructions(cases, args.instructions)


if __name__ == "__main__":
    main()
