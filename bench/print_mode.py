"""Whole-process time of ``picode -p`` against the wire test server, per wire API.

Each run spawns ``python -m picode -p hello --model <api's model>`` in a fresh temporary
home and project, with the SDK's base URL (or a config.toml provider) pointing at the wire
server on 127.0.0.1, which answers with a short streamed text. The time is wall clock from
spawn to exit. In the same rounds, interleaved, the script times the baselines
``python -c pass`` (interpreter start), ``python -c "import picode.cli"`` (what
``--version`` loads), picode's print-mode modules without any SDK, and the same plus one
provider module (which imports its SDK). picode imports the SDK lazily on the first
request, so that import is part of every print-mode run; the difference of the last two
rows is its cost, and the summary says what share of a run it is.

It also reports when the request reached the server (spawn → request), which splits a run
into start-up (imports, config, session, SDK import) and the request itself plus exit.

Usage: python bench/print_mode.py [--runs 9] [--apis anthropic,responses,chat,gemini]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.cli.apis import (
    AnthropicDriver,
    ApiDriver,
    ChatDriver,
    GeminiDriver,
    ResponsesDriver,
)
from tests.cli.harness import PicodeEnv
from tests.wire.server import WireServer

from _stats import machine

DRIVERS: dict[str, ApiDriver] = {
    "anthropic": AnthropicDriver(),
    "responses": ResponsesDriver(),
    "chat": ChatDriver(),
    "gemini": GeminiDriver(),
}
PROVIDER_MODULE = {
    "anthropic": "picode.ai.providers.anthropic_messages",
    "responses": "picode.ai.providers.openai_responses",
    "chat": "picode.ai.providers.openai_completions",
    "gemini": "picode.ai.providers.google_generative_ai",
}
#: What print mode imports before its first request (no SDK yet).
PICODE_STACK = (
    "import picode.launch, picode.session.agent_session, picode.modes.headless, picode.tools"
)


@dataclass
class Series:
    label: str
    seconds: list[float] = field(default_factory=list)
    to_request: list[float] = field(default_factory=list)

    def cell(self, values: list[float] | None = None) -> str:
        values = self.seconds if values is None else values
        if not values:
            return "–"
        median = statistics.median(values)
        return f"{median * 1000:.0f} ms ({min(values) * 1000:.0f}–{max(values) * 1000:.0f})"


def timed(command: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - started


def picode_run(driver: ApiDriver, root: Path) -> tuple[float, float]:
    """(whole process, spawn → request at the server) for one ``picode -p``."""
    with WireServer() as wire:
        env = PicodeEnv(Path(tempfile.mkdtemp(dir=root)))
        env.env.update(driver.environment(wire))
        config = driver.config(wire)
        if config:
            env.add_config(config)
        wire.enqueue(driver.text("Hello", " there."))
        started = time.perf_counter()
        started_mono = time.monotonic()
        result = env.run("-p", "hello", "--model", driver.model, "--no-session")
        elapsed = time.perf_counter() - started
        if result.returncode != 0 or result.stdout != "Hello there.\n":
            raise SystemExit(f"{driver.name}: picode failed: {result.stderr}")
        return elapsed, wire.requests[0].received_at - started_mono


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--apis", default=",".join(DRIVERS))
    options = parser.parse_args()
    apis = [name.strip() for name in options.apis.split(",") if name.strip()]

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        base = PicodeEnv(Path(tempfile.mkdtemp(dir=root)))
        env, cwd = base.env, base.project
        python = sys.executable
        series: dict[str, Series] = {
            "pass": Series("`python -c pass`"),
            "cli": Series("`python -c 'import picode.cli'`"),
        }
        actions: dict[str, Callable[[], None]] = {
            "pass": lambda: series["pass"].seconds.append(timed([python, "-c", "pass"], env, cwd)),
            "cli": lambda: series["cli"].seconds.append(
                timed([python, "-c", "import picode.cli"], env, cwd)
            ),
        }
        series["stack"] = Series("picode print-mode modules, no SDK")
        actions["stack"] = lambda: series["stack"].seconds.append(
            timed([python, "-c", PICODE_STACK], env, cwd)
        )
        for name in apis:
            key = f"sdk:{name}"
            series[key] = Series(f"… plus `{PROVIDER_MODULE[name].rsplit('.', 1)[1]}` and its SDK")
            code = f"{PICODE_STACK}; import {PROVIDER_MODULE[name]}"
            actions[key] = lambda key=key, code=code: series[key].seconds.append(
                timed([python, "-c", code], env, cwd)
            )
        for name in apis:
            driver = DRIVERS[name]
            key = f"picode:{name}"
            series[key] = Series(f"`picode -p` ({driver.name})")

            def run_picode(key: str = key, driver: ApiDriver = driver) -> None:
                whole, to_request = picode_run(driver, root)
                series[key].seconds.append(whole)
                series[key].to_request.append(to_request)

            actions[key] = run_picode

        for action in actions.values():  # warm-up: bytecode caches, page cache
            action()
        for key in series:
            series[key].seconds.clear()
            series[key].to_request.clear()
        for _ in range(options.runs):
            for action in actions.values():
                action()

    baseline = statistics.median(series["pass"].seconds)
    print(machine())
    print(f"\n{options.runs} interleaved runs each after one warm-up; median (min–max).\n")
    print("| What | Wall time | − `python -c pass` | × `python -c pass` | Spawn → request |")
    print("| --- | --- | --- | --- | --- |")
    for item in series.values():
        median = statistics.median(item.seconds)
        request = item.cell(item.to_request) if item.to_request else "–"
        print(
            f"| {item.label} | {item.cell()} | {(median - baseline) * 1000:+.0f} ms "
            f"| {median / baseline:.2f} | {request} |"
        )
    print()
    stack = statistics.median(series["stack"].seconds)
    for name in apis:
        whole = statistics.median(series[f"picode:{name}"].seconds)
        sdk = statistics.median(series[f"sdk:{name}"].seconds) - stack
        print(
            f"- {DRIVERS[name].name}: importing the SDK takes {sdk * 1000:.0f} ms of the "
            f"{whole * 1000:.0f} ms run ({sdk / whole:.0%})."
        )


if __name__ == "__main__":
    main()
