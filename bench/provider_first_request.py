"""A provider's first request in a fresh process, without the TUI: what picode's provider
adds to the SDK import on the way to the first answer.

    python bench/provider_first_request.py [--apis google-generative-ai,...] [--runs 5]
                                           [--instructions N] [--compare SRC]

Each run is a new interpreter that imports the provider module (and so its SDK), builds
the client (``prepare``), and streams the 8.5 kB Markdown reply of
``bench/first_request.py`` twice from the wire test server in the same process
(``stream_simple``, the builder and the event stream included). Printed per API: the CPU
time (``time.process_time``, all threads, the server's included) of each phase, medians
of ``--runs``. ``--instructions N`` also counts the instructions of the whole process
under valgrind (callgrind), N runs, against the floor: a process doing only ``import
<sdk>`` (as ``first_request.py`` takes it), the least any client of that SDK does; unlike
CPU time, instruction counts do not move with the machine's load. ``--compare SRC``: the
same for another build's ``src`` folder (``git archive <rev> src | tar -x -C OTHER`` gives
``OTHER/src``), run in turns with this one. ``--sdk-cache``: the children find the index of
``google.genai.types`` cached, as a launch after the first does (built here first; a build
without ``picode.ai.sliced_module`` runs as it is).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _stats import Summary, fmt, machine
from first_request import SDK_IMPORT

ROOT = Path(__file__).resolve().parents[1]

PHASES = ("import", "client", "request 1", "request 2")

#: Run in the child: prints the CPU time of each phase as JSON.
CHILD = """
import asyncio, json, sys, time
sys.path[:0] = [{root!r}, {bench!r}]
clock = time.process_time
marks = [clock()]
import importlib, os
if os.environ.get("BENCH_SDK_CACHE"):
    try:
        from picode.ai import sliced_module
    except ImportError:
        pass
    else:
        from pathlib import Path
        sliced_module.set_cache_dir(Path(os.environ["BENCH_SDK_CACHE"]))
from picode.ai.stream import PROVIDER_MODULES
provider = importlib.import_module(PROVIDER_MODULES[{api!r}])
marks.append(clock())
from first_request import reply_pieces
from tests.cli.apis import DRIVERS
from tests.providers.models import wire_model
from tests.wire.server import WireServer
from picode.ai.options import StreamOptions
from picode.ai.stream import stream_simple
from picode.ai.types import Context, UserMessage
driver = next(d for d in DRIVERS if d.name == {api!r})
async def main(wire):
    model = wire_model({api!r}, wire)
    options = StreamOptions(api_key="bench-key")
    start = clock()
    await provider.prepare(model, options)
    phases = [marks[1] - marks[0], clock() - start]
    for _ in range(2):
        wire.enqueue(driver.text(*reply_pieces()))
        start = clock()
        context = Context(system_prompt="Be brief.", messages=[UserMessage("hello")])
        async for _event in stream_simple(model, context, options):
            pass
        phases.append(clock() - start)
    print(json.dumps(phases))
with WireServer() as wire:
    asyncio.run(main(wire))
"""

VALGRIND = ("valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null")


def child_code(api: str) -> str:
    return CHILD.format(root=str(ROOT), bench=str(ROOT / "bench"), api=api)


def env_for(src: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH")]))
    return env


def phases(api: str, src: Path | None) -> list[float]:
    done = subprocess.run(
        [sys.executable, "-c", child_code(api)],
        capture_output=True,
        text=True,
        check=True,
        env=env_for(src),
    )
    return [float(x) for x in json.loads(done.stdout.strip().splitlines()[-1])]


def instructions(code: str, src: Path | None) -> float:
    done = subprocess.run(
        [*VALGRIND, sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=env_for(src),
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"no instruction count from valgrind:\n{done.stderr[-2000:]}")
    return float(found.group(1))


def fill_sdk_cache() -> str:
    """A folder holding the index of ``google.genai.types`` (this build's)."""
    import tempfile

    import google.genai.types

    from picode.ai.slice_index import write
    from picode.ai.sliced_module import index_path

    folder = tempfile.mkdtemp(prefix="bench-sdk-cache-")
    origin = os.path.abspath(str(google.genai.types.__file__))
    write(origin, str(index_path(Path(folder), "google.genai.types")))
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apis", default=",".join(SDK_IMPORT))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--instructions", type=int, default=0)
    parser.add_argument("--compare", type=Path, help="another build's src folder")
    parser.add_argument("--sdk-cache", action="store_true", help="the SDK's index cached")
    args = parser.parse_args()
    if args.sdk_cache:
        os.environ["BENCH_SDK_CACHE"] = fill_sdk_cache()
    builds: dict[str, Path | None] = {"this build": None}
    if args.compare is not None:
        builds["compared"] = args.compare.resolve()
    print(machine())
    for api in args.apis.split(","):
        times: dict[str, list[list[float]]] = {name: [] for name in builds}
        for _ in range(args.runs):
            for name, src in builds.items():
                times[name].append(phases(api, src))
        for name, runs in times.items():
            cells = [
                f"{phase} {fmt(Summary.of([run[i] for run in runs]))}"
                for i, phase in enumerate(PHASES)
            ]
            print(f"{api}, {name}: CPU " + " | ".join(cells) + f" | n={args.runs}", flush=True)
        if not args.instructions:
            continue
        counts: dict[str, list[float]] = {"floor": [], **{name: [] for name in builds}}
        for _ in range(args.instructions):
            counts["floor"].append(instructions(SDK_IMPORT[api], None))
            for name, src in builds.items():
                counts[name].append(instructions(child_code(api), src))
        floor = Summary.of(counts["floor"])
        for name, values in counts.items():
            got = Summary.of(values)
            print(
                f"{api}, {name}: {got.median / 1e6:,.0f} M instructions "
                f"({min(values) / 1e6:,.0f}–{max(values) / 1e6:,.0f}) = "
                f"{got.ratio(floor):.2f}× `{SDK_IMPORT[api]}`",
                flush=True,
            )


if __name__ == "__main__":
    main()
