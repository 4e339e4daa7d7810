"""Where the installed ``picode``'s resident memory goes after a few replies (issue 33).

    python bench/rss_breakdown.py [--replies 5] [--command OTHER/.venv/bin/picode]

**The live app.** ``picode`` runs in a pseudo-terminal as bench/long_session.py runs it: one
reply to warm up (the SDK is imported), one streamed, then ``--replies`` more of ~8.5 kB.
A probe inside the app (a ``sitecustomize`` on ``PYTHONPATH`` that answers SIGUSR1, after a
garbage collection) then writes what the process holds: VmRSS, anonymous against
file-backed memory (``/proc/self/smaps_rollup``), the largest mapped files, glibc's heap
(``mallinfo2``, every arena), pymalloc's arenas (``sys._debugmallocstats``), the threads
and ``sys.modules``.

**What those modules cost.** A fresh interpreter imports the same modules, group by group
(the finders picode's providers load the SDK with installed before it, as the app has
them), and reads VmRSS after each: the interpreter, the rest of the standard library,
Textual and Rich, Markdown and Pygments, pydantic, the HTTP stack, the SDK, picode. What
the live app holds beyond their sum is its own state: widgets, the conversation, caches,
threads. Linux only (``/proc``, glibc).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.cli.apis import AnthropicDriver, use
from tests.cli.harness import PicodeEnv
from tests.cli.terminal import Terminal
from tests.wire.server import WireServer

from _stats import machine
from long_session import App, Replies, one_reply, rss_mb, streamed_reply

PICODE_COMMAND = str(Path(sys.executable).parent / "picode")

#: Installed in the app as ``sitecustomize``: on SIGUSR1 it writes its facts to $RSS_PROBE_OUT.
PROBE = r"""
import os, signal, sys

def _facts(*_):
    import ctypes, gc, json, threading
    gc.collect()
    out = os.environ["RSS_PROBE_OUT"]
    names = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in names.split()]

    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = MallInfo2
    info = libc.mallinfo2()
    saved, sink = os.dup(2), os.open(out + ".pymalloc", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(sink, 2)  # _debugmallocstats writes to C's stderr
    try:
        sys._debugmallocstats()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(sink)
    facts = {
        "status": open("/proc/self/status").read(),
        "rollup": open("/proc/self/smaps_rollup").read(),
        "smaps": open("/proc/self/smaps").read(),
        "mallinfo2": {name: getattr(info, name) for name in names.split()},
        "threads": [thread.name for thread in threading.enumerate()],
        "modules": sorted(sys.modules),
    }
    with open(out + ".tmp", "w") as file:
        json.dump(facts, file)
    os.replace(out + ".tmp", out)

signal.signal(signal.SIGUSR1, _facts)
"""

#: Run in a fresh interpreter: VmRSS after importing each group of the app's modules.
LAYERS = r"""
import gc, importlib, json, sys

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

groups = json.loads(sys.argv[1])
print(json.dumps(["interpreter", rss()]), flush=True)
for name, modules in groups:
    if name.startswith("SDK"):
        # The finders the providers load their SDK with: only what a request uses.
        import picode.ai.providers
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception:
            pass  # an optional import the app tried and lost, or a platform's module
    gc.collect()
    print(json.dumps([name, rss()]), flush=True)
anonymous = [line for line in open("/proc/self/smaps_rollup") if line.startswith("Anonymous:")]
print(json.dumps(["anonymous", int(anonymous[0].split()[1]) / 1024]), flush=True)
"""

GROUPS: list[tuple[str, tuple[str, ...]]] = [
    ("Textual and Rich", ("textual", "textual_speedups", "rich")),
    ("Markdown and Pygments", ("markdown_it", "mdurl", "linkify_it", "pygments")),
    (
        "pydantic",
        ("pydantic", "pydantic_core", "annotated_types", "typing_inspection", "typing_extensions"),
    ),
    (
        "HTTP stack",
        (
            "httpx2", "httpcore2", "h11", "anyio", "sniffio", "idna", "certifi", "truststore",
            "distro", "jiter", "opentelemetry", "docstring_parser",
        ),
    ),
    ("SDK (anthropic)", ("anthropic",)),
    ("picode", ("picode",)),
]  # fmt: skip


def group_of(module: str) -> str:
    top = module.split(".")[0]
    for name, tops in GROUPS:
        if top in tops:
            return name
    return "standard library and the rest"


def live_facts(command: str, replies_after: int, out: Path) -> tuple[dict, list[float]]:
    replies = Replies()
    with WireServer() as wire, tempfile.TemporaryDirectory() as tmp:
        wire.default_responder = replies
        root = Path(tmp) / "app"
        root.mkdir()
        probe = Path(tmp) / "probe"
        probe.mkdir()
        (probe / "sitecustomize.py").write_text(PROBE)
        env = PicodeEnv(root)
        env.env.pop("NO_COLOR")
        env.env["PYTHONPATH"] = str(probe)
        env.env["RSS_PROBE_OUT"] = str(out)
        api = use(AnthropicDriver(), wire, env)
        terminal = Terminal(["--model", api.model], cwd=env.project, env=env.env, command=[command])
        try:
            terminal.wait_for_text("↑0 ↓0", timeout=60)
            terminal.render = False
            time.sleep(1)
            app = App("picode", terminal)
            one_reply(app, wire, replies)  # imports the SDK, as long_session.py's first reply
            streamed_reply(app, wire, replies)
            for _ in range(replies_after):
                one_reply(app, wire, replies)
            os.kill(terminal.process.pid, signal.SIGUSR1)
            deadline = time.monotonic() + 30
            while not out.exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            facts = json.loads(out.read_text())
            facts["after_dump"] = rss_mb(terminal.process.pid)
            facts["pymalloc"] = Path(f"{out}.pymalloc").read_text()
            return facts, app.rss
        finally:
            terminal.close()


def kb(text: str, field: str) -> float:
    match = re.search(rf"^{field}:\s+(\d+) kB", text, re.M)
    return int(match.group(1)) / 1024 if match else float("nan")


def mapped_files(smaps: str) -> list[tuple[float, str]]:
    sizes: dict[str, float] = {}
    current = ""
    for line in smaps.splitlines():
        if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
            parts = line.split(None, 5)
            current = parts[5].strip() if len(parts) > 5 else "[anon]"
        elif line.startswith("Rss:"):
            sizes[current] = sizes.get(current, 0.0) + int(line.split()[1]) / 1024
    files = [(mb, Path(name).name) for name, mb in sizes.items() if name.startswith("/")]
    return sorted(files, reverse=True)


def pymalloc(stats: str) -> tuple[float, float]:
    """(arenas, bytes in allocated blocks) in MB."""
    arenas = re.search(r"^(\d+) arenas \* \d+ bytes/arena\s+=\s+([\d,]+)", stats, re.M)
    used = re.search(r"^# bytes in allocated blocks\s+=\s+([\d,]+)", stats, re.M)
    total = int(arenas.group(2).replace(",", "")) if arenas else 0
    return total / 2**20, int(used.group(1).replace(",", "")) / 2**20 if used else 0.0


def layers(command: str, modules: list[str]) -> list[tuple[str, float]]:
    python = Path(command).parent / "python"
    if not python.exists():  # a wrapper script: the interpreter running this bench
        python = Path(sys.executable)
    by_group: dict[str, list[str]] = {}
    for module in modules:
        if module in ("__main__", "sitecustomize"):
            continue
        by_group.setdefault(group_of(module), []).append(module)
    order = ["standard library and the rest", *(name for name, _ in GROUPS)]
    groups = [(name, by_group.get(name, [])) for name in order]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(
        [str(python), "-c", LAYERS, json.dumps(groups)],
        capture_output=True, text=True, check=True, env=env,
    )  # fmt: skip
    return [tuple(json.loads(line)) for line in done.stdout.splitlines()]  # type: ignore[misc]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replies", type=int, default=5, help="replies after the streamed one")
    parser.add_argument("--command", default=PICODE_COMMAND, help="the picode to measure")
    args = parser.parse_args()
    print(machine(), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        facts, rss = live_facts(args.command, args.replies, Path(tmp) / "facts.json")
    status, rollup = facts["status"], facts["rollup"]
    info = {name: value / 2**20 for name, value in facts["mallinfo2"].items()}
    arenas, in_blocks = pymalloc(facts["pymalloc"])
    print(f"\n### The live app after {args.replies} replies (and one streamed, one to warm up)\n")
    print("RSS after each reply (MB): " + ", ".join(f"{value:.1f}" for value in rss))
    print(f"VmRSS {kb(status, 'VmRSS'):.1f} MB: anonymous {kb(rollup, 'Anonymous'):.1f}, ", end="")
    print(f"file-backed {kb(rollup, 'Rss') - kb(rollup, 'Anonymous'):.1f} ", end="")
    print(f"(of it shared with other processes {kb(rollup, 'Shared_Clean'):.1f})")
    print(f"pymalloc: {arenas:.1f} MB of arenas, {in_blocks:.1f} MB in allocated blocks")
    print(
        f"glibc malloc (all arenas): {info['arena']:.1f} MB from brk/arenas "
        f"({info['uordblks']:.1f} in use, {info['fordblks']:.1f} free), "
        f"{info['hblkhd']:.1f} MB in mmap'd blocks"
    )
    print(f"threads: {', '.join(facts['threads'])}")
    modules: list[str] = facts["modules"]
    counts: dict[str, int] = {}
    for module in modules:
        counts[group_of(module)] = counts.get(group_of(module), 0) + 1
    print(f"modules: {len(modules)}")
    largest = mapped_files(facts["smaps"])[:8]
    print("largest mapped files (MB): " + ", ".join(f"{name} {mb:.1f}" for mb, name in largest))
    print("\n### The same modules imported group by group in a fresh interpreter\n")
    print("| group | modules | VmRSS after | added |")
    print("|---|---:|---:|---:|")
    previous = 0.0
    imported = layers(args.command, modules)
    anonymous = dict(imported).pop("anonymous")
    for name, value in imported[:-1]:
        added = value - previous if previous else value
        print(f"| {name} | {counts.get(name, 0) or ''} | {value:.1f} MB | {added:.1f} MB |")
        previous = value
    live = kb(status, "VmRSS")
    print(f"| the app's own state (the live VmRSS less the imports) | | {live:.1f} MB | ", end="")
    print(f"{live - previous:.1f} MB |")
    print(
        f"\nfile-backed: {previous - anonymous:.1f} MB after the imports, "
        f"{live - kb(rollup, 'Anonymous'):.1f} MB in the live app; anonymous: {anonymous:.1f} / "
        f"{kb(rollup, 'Anonymous'):.1f} MB"
    )


if __name__ == "__main__":
    main()
