"""The first answer after launch, per provider: the installed ``picode`` in a pty, a prompt
typed the moment the first frame shows (or given on the command line), against the local
wire-faithful test server.

    python bench/first_request.py [--runs 5] [--providers anthropic-messages,...]
                                  [--argv] [--compare SRC] [--anchors DIR]

Each run starts picode afresh (new home, new server), waits for the prompt box of the first
frame, types ``hello`` and Enter at once, and times until the request reaches the server
and until the reply's last line (an 8.5 kB Markdown reply sent at once) is written to the
terminal. ``--argv`` also runs ``picode hello``: the prompt on the command line, no typing.
Reported per API: launch → prompt ready, Enter → request, launch → request, launch → last
line shown.

The floor, measured in the same run and alternating with the samples: a fresh
``python -c "import textual.app, <sdk>"``, the least a Python process showing a Textual
screen and speaking through the official SDK must do. Target (issue 36): launch → last line
≤ 1.15× the floor.

``--compare SRC``: also another build of picode, run the same way in turns with this one:
``SRC`` is that build's ``src`` folder (``git archive main src | tar -x -C OTHER`` gives
``OTHER/src``), put first on ``PYTHONPATH`` for its runs (the SDKs and Textual are this
environment's).

picode's cache folder (what it keeps between starts, e.g. the compiled dataclass methods)
is one per build for the whole run, as a person's is, and each build is launched once,
unmeasured, before the first run: the figures are those of a second start onwards (for
google, once the index of ``google.genai.types`` that the first start has built in the
background is there). ``--cold`` gives every run an empty cache folder instead (a first
start on a machine).

``--anchors DIR``: also pi (``@mariozechner/pi-coding-agent``) and Claude Code
(``@anthropic-ai/claude-code``), installed with ``npm install --prefix DIR``, the same way
for the Anthropic API (same server, same reply, prompt typed when their prompt is ready);
each keeps its home between runs and starts once unmeasured first, as picode keeps its
cache folder. ``--providers none`` runs the anchors alone.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.cli.apis import DRIVERS, AnthropicDriver, ApiDriver, use
from tests.cli.harness import PicodeEnv
from tests.cli.terminal import CTRL_C, ENTER, Terminal
from tests.wire.server import WireServer

from _stats import Summary, fmt, machine, verdict

PICODE_COMMAND = [str(Path(sys.executable).parent / "picode")]
SDK_IMPORT = {
    "anthropic-messages": "import anthropic",
    "openai-responses": "import openai",
    "openai-completions": "import openai",
    "google-generative-ai": "from google import genai",
}
FIRST_WORD = "Zebrafish"
LAST_WORD = "Okapi"
FLOOR_RATIO = 1.15
TIMEOUT_S = 60.0


def reply_pieces() -> list[str]:
    """About 8.5 kB of Markdown (headings, paragraphs, a list, code), in 64-character
    pieces; it starts with ``FIRST_WORD`` and its last line is ``LAST_WORD``."""
    section = (
        "## Step {n}\n\nThe quick brown fox jumps over the **lazy** dog, `twice`, and then "
        "reads the file again to be sure. "
        * 1
        + "Nothing else changes.\n\n- one item\n- another item with `code`\n\n"
        "```python\nprint('hello {n}')\n```\n\n"
    )
    text = f"{FIRST_WORD} says hello.\n\n"
    n = 0
    while len(text) < 8_400:
        n += 1
        text += section.replace("{n}", str(n))
    text += f"{LAST_WORD} ends here."
    return [text[i : i + 64] for i in range(0, len(text), 64)]


def wall(command: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one fresh process."""
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.monotonic() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"{command} failed: {process.returncode}")
    return elapsed, usage.ru_utime + usage.ru_stime


def cpu_so_far(pid: int) -> float:
    """CPU time (user + system, all threads) a live process has used: a figure that moves
    much less with the machine's load than wall time does."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Figures:
    ready: list[float] = field(default_factory=list)
    enter_token: list[float] = field(default_factory=list)
    token: list[float] = field(default_factory=list)
    last: list[float] = field(default_factory=list)
    #: CPU time picode used from launch until its last line was written.
    cpu: list[float] = field(default_factory=list)


def one_run(
    api: ApiDriver,
    root: Path,
    *,
    argv: bool,
    command: list[str] | None = None,
    args: list[str] | None = None,
    ready_text: bytes = "sk picode…".encode(),
    env_extra: Callable[[dict[str, str]], None] | None = None,
    cache: Path | None = None,
    quit_after: bool = False,
) -> tuple[float, float, float, float, float]:
    """(launch → prompt ready, Enter → request, launch → request, launch → last line, CPU
    time until the last line). ``cache``: the cache folder kept between runs;
    ``quit_after``: quit as a person does (Ctrl+C twice) rather than closing the terminal,
    so that picode writes what it keeps at exit."""
    with WireServer() as wire:
        env = PicodeEnv(root)
        if cache is not None:
            cache.mkdir(exist_ok=True)
            (env.home / "cache").symlink_to(cache, target_is_directory=True)
        env.env.pop("NO_COLOR")
        use(api, wire, env)
        if env_extra is not None:
            env_extra(env.env)
        # An anchor may ask other things first (Claude Code checks the address, a quota):
        # each request gets the reply, and the first POST counts as the request.
        for _ in range(1 if command is None else 8):
            wire.enqueue(api.text(*reply_pieces()))
        words = args if args is not None else ["--model", api.model]
        if argv:
            words = [*words, "hello"]
        launched = time.monotonic()
        terminal = Terminal(words, cwd=env.project, env=env.env, command=command or PICODE_COMMAND)
        try:
            terminal.render = False
            # The cursor cell styles the "A" apart: the rest of the prompt box text is one run.
            frame = terminal.wait_for_bytes(ready_text, 0, timeout=TIMEOUT_S)
            since = len(terminal.output)
            pressed = frame
            if not argv:
                terminal.send(b"hello")
                pressed = time.monotonic()
                terminal.send(ENTER)
            last = terminal.wait_for_bytes(LAST_WORD.encode(), since, timeout=TIMEOUT_S)
            cpu = cpu_so_far(terminal.process.pid)
            sent = next(r.received_at for r in wire.requests if r.method == "POST")
            if quit_after:
                terminal.send(CTRL_C)
                terminal.send(CTRL_C)
                terminal.wait_exit(TIMEOUT_S)
        finally:
            terminal.close()
    return frame - launched, sent - pressed, sent - launched, last - launched, cpu


@dataclass
class Floor:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def measure(self, statement: str) -> None:
        elapsed, cpu = wall([sys.executable, "-c", statement])
        self.wall.append(elapsed)
        self.cpu.append(cpu)


def add(into: Figures, figures: tuple[float, ...]) -> None:
    lists = (into.ready, into.enter_token, into.token, into.last, into.cpu)
    for values, value in zip(lists, figures, strict=True):
        values.append(value)


def report(name: str, floor: Floor, got: Figures, runs: int) -> None:
    last, base = Summary.of(got.last), Summary.of(floor.wall)
    cpu, base_cpu = Summary.of(got.cpu), Summary.of(floor.cpu)
    print(
        f"{name:28s} floor {fmt(base)}, CPU {fmt(base_cpu)} | prompt ready "
        f"{fmt(Summary.of(got.ready))} | Enter → request {fmt(Summary.of(got.enter_token))} | "
        f"launch → request {fmt(Summary.of(got.token))} | launch → last line {fmt(last)} = "
        f"**{last.ratio(base):.2f}×** floor ({verdict(last.ratio(base) <= FLOOR_RATIO)}) | "
        f"CPU to last line {fmt(cpu)} = {cpu.ratio(base_cpu):.2f}× the floor's | n={runs}",
        flush=True,
    )


@contextmanager
def on_python_path(src: Path | None) -> Iterator[None]:
    """``src`` first on ``PYTHONPATH`` for the children started meanwhile (None: as is)."""
    if src is None:
        yield
        return
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), before]))
    try:
        yield
    finally:
        if before is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = before


def anchor_commands(directory: Path) -> dict[str, list[str]]:
    """The command of each anchor installed in ``directory`` with npm."""
    bins = directory / "node_modules" / ".bin"
    return {name: [str(bins / name)] for name in ("pi", "claude") if (bins / name).exists()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--providers", default=",".join(d.name for d in DRIVERS))
    parser.add_argument("--argv", action="store_true", help="also `picode hello`")
    parser.add_argument("--anchors", type=Path, help="npm prefix holding pi and claude")
    parser.add_argument(
        "--compare", type=Path, help="another build's src folder, run in turns with this one"
    )
    parser.add_argument("--cold", action="store_true", help="an empty cache folder for every run")
    args = parser.parse_args()
    chosen = [d for d in DRIVERS if d.name in args.providers.split(",")]
    builds: dict[str, Path | None] = {"": None}
    if args.compare:
        builds = {"this build": None, "compared": args.compare.resolve()}
    print(machine(), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for api in chosen:
            floor = Floor()
            typed = {build: Figures() for build in builds}
            given = {build: Figures() for build in builds}
            caches: dict[str, Path | None] = {
                build: None if args.cold else Path(tmp) / f"cache-{len(build)}" for build in builds
            }
            for build, src in builds.items():
                if args.cold:
                    continue
                warm_up = Path(tmp) / f"{api.name}-warm-up-{len(build)}"
                warm_up.mkdir()
                with on_python_path(src):
                    one_run(api, warm_up, argv=False, cache=caches[build], quit_after=True)
                wait_for_sdk_index(api, caches[build], src)
            for run in range(args.runs):
                floor.measure(f"import textual.app; {SDK_IMPORT[api.name]}")
                for build, src in builds.items():
                    for argv, into in ((False, typed), (True, given)):
                        if argv and not args.argv:
                            continue
                        root = Path(tmp) / f"{api.name}-{run}-{argv}-{len(build)}"
                        root.mkdir()
                        with on_python_path(src):
                            add(
                                into[build],
                                one_run(api, root, argv=argv, cache=caches[build]),
                            )
            for build in builds:
                label = f" ({build})" if build else ""
                report(f"{api.name}, typed{label}", floor, typed[build], args.runs)
                if args.argv:
                    report(f"{api.name}, `picode hello`{label}", floor, given[build], args.runs)
        if args.anchors:
            run_anchors(args.anchors, args.runs, Path(tmp))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def wait_for_sdk_index(api: ApiDriver, cache: Path | None, src: Path | None) -> None:
    """The index of ``google.genai.types`` a first start has a process build in the
    background (``picode.ai.sliced_module``), in ``cache`` before the measured runs: waited
    for up to ``TIMEOUT_S`` when the build slices modules."""
    build = src or Path(__file__).resolve().parents[1] / "src"
    if (
        cache is None
        or api.name != "google-generative-ai"
        or not (build / "picode" / "ai" / "sliced_module.py").exists()
    ):
        return
    index = cache / "sdk-slices" / "google.genai.types.slice"
    deadline = time.monotonic() + TIMEOUT_S
    while not index.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    if not index.exists():
        print(f"{api.name}: no SDK index in the cache after {TIMEOUT_S:g} s", flush=True)


def run_anchors(directory: Path, runs: int, tmp: Path) -> None:
    """pi and Claude Code against the same server and reply, for the Anthropic API."""
    api = AnthropicDriver()
    anchors = anchor_commands(directory)
    if not anchors:
        print(f"no anchors under {directory}/node_modules/.bin (npm install --prefix {directory})")
        return
    floor = Floor()
    results: dict[str, Figures] = {name: Figures() for name in ["picode", *anchors]}
    # Each keeps its home (and so its caches) from one run to the next, as a person's does,
    # and starts once unmeasured first: the figures are those of a second start onwards.
    cache = tmp / "anchor-picode-cache"
    for run in range(-1, runs):
        if run >= 0:
            floor.measure("import textual.app; import anthropic")
        for name, into in results.items():
            root = tmp / f"anchor-{name}-{run}"
            root.mkdir()
            if name == "picode":
                figures = one_run(api, root, argv=False, cache=cache, quit_after=run < 0)
            else:
                home = tmp / f"anchor-{name}-home"
                home.mkdir(exist_ok=True)
                figures = one_run(
                    api,
                    root,
                    argv=False,
                    command=anchors[name],
                    args=anchor_args(name),
                    ready_text=anchor_ready(name),
                    env_extra=lambda env, n=name, h=home, r=root: anchor_env(n, env, h, r),
                )
            if run >= 0:
                add(into, figures)
    for name, got in results.items():
        report(f"anchor {name}", floor, got, runs)


def anchor_args(name: str) -> list[str]:
    return ["--model", "claude-sonnet-4-5"] if name == "pi" else []


def anchor_ready(name: str) -> bytes:
    # What each draws once its prompt takes input.
    return b"claude-sonnet" if name == "pi" else b"shortcuts"


def anchor_env(name: str, env: dict[str, str], home: Path, root: Path) -> None:
    """``home``: the anchor's, kept between runs; ``root``: this run's folder."""
    env["HOME"] = str(home)
    if name == "pi":  # pi takes a built-in provider's address from its models.json
        agent = Path(env["HOME"]) / ".pi" / "agent"
        agent.mkdir(parents=True, exist_ok=True)
        providers = {"anthropic": {"baseUrl": env["ANTHROPIC_BASE_URL"]}}
        (agent / "models.json").write_text(json.dumps({"providers": providers}))
    if name == "claude":
        settings = Path(env["HOME"]) / ".claude.json"
        project = str(root / "project")  # PicodeEnv's folder, where the run starts
        state = {
            "hasCompletedOnboarding": True,
            "theme": "dark",
            "projects": {project: {"hasTrustDialogAccepted": True}},
            # Claude Code asks once about a key from the environment (its last 20 characters).
            "customApiKeyResponses": {"approved": [env["ANTHROPIC_API_KEY"][-20:]]},
        }
        settings.write_text(json.dumps(state))
        env["DISABLE_AUTOUPDATER"] = "1"
        env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"


if __name__ == "__main__":
    main()
