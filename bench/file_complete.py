"""``@`` file completion benchmark: index build and per-query time in a 50,000-file tree.

Run: ``python bench/file_complete.py [--files 50000] [--runs 7]``.
Everything happens in a temporary folder; prints markdown tables. Baselines measured in the
same run:
- build: ``rg --files`` alone (the subprocess the index is made from);
- query: one Python substring test per path (``[p for p in paths if q in p]``), the floor
  for any search that looks at every path in Python.
"""

from __future__ import annotations

import argparse
import gc
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _stats import Summary, fmt, machine
from picode.tools.rg_path import find_rg
from picode.tui.completion.files import FileIndex

WORDS = (
    "src",
    "core",
    "util",
    "utils",
    "api",
    "client",
    "server",
    "model",
    "models",
    "view",
    "views",
    "test",
    "tests",
    "spec",
    "lib",
    "config",
    "settings",
    "parser",
    "lexer",
    "render",
    "widget",
    "widgets",
    "store",
    "session",
    "index",
    "cache",
    "http",
    "auth",
    "user",
    "users",
    "admin",
    "data",
    "schema",
    "migrate",
    "migrations",
    "build",
    "tools",
    "scripts",
    "docs",
    "components",
    "hooks",
    "service",
    "services",
    "handler",
    "handlers",
    "route",
    "routes",
    "types",
    "common",
)
EXTENSIONS = (".py", ".ts", ".tsx", ".js", ".md", ".json", ".go", ".rs", ".css", ".txt")
QUERIES = ("s", "ut", "cfg", "parser", "widgtest", "src/core/api", "handlers_route.ts", "zzqx")


def make_tree(root: Path, count: int, rng: random.Random) -> None:
    """A project-like tree: about 20 files per folder, folders 1-6 deep."""
    folders = sorted(
        {"/".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6))) for _ in range(count // 20)}
    )
    for folder in folders:
        (root / folder).mkdir(parents=True, exist_ok=True)
    for made in range(count):
        name = "_".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
        (root / rng.choice(folders) / f"{name}_{made}{rng.choice(EXTENSIONS)}").touch()
    (root / ".gitignore").write_text("*.txt\n", encoding="utf-8")


def median_time(action: Callable[[], object], runs: int) -> Summary:
    times = []
    for _ in range(runs):
        gc.collect()
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return Summary.of(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    binary = find_rg()
    if binary is None:
        sys.exit("ripgrep (rg) is needed: install the `ripgrep` package")
    with tempfile.TemporaryDirectory(prefix="picode-bench-") as tmp:
        root = Path(tmp)
        print(f"generating {args.files:,} files ...", file=sys.stderr)
        make_tree(root, args.files, random.Random(7))
        command = [binary, "--files", "--hidden", "--no-require-git", "--no-config", "--null"]
        index = FileIndex(root)

        rg_alone = median_time(
            lambda: subprocess.run(command, cwd=root, capture_output=True, check=False), args.runs
        )
        build = median_time(index.build_now, args.runs)
        files = index.files()
        paths = index._snapshot.paths if index._snapshot else []
        print(
            f"  indexed {len(files):,} files ({len(paths):,} entries with folders)", file=sys.stderr
        )

        print(machine())
        print(f"\n### Index build, {len(files):,} files ({args.runs} runs)\n")
        print("| step | median (min–max) | × baseline |")
        print("|---|---:|---:|")
        print(f"| `rg --files` alone (baseline) | {fmt(rg_alone)} | 1.00 |")
        print(f"| FileIndex.build_now | {fmt(build)} | {build.ratio(rg_alone):.2f} |")

        lowered = [p.lower() for p in paths]
        runs = args.runs * 5
        print(f"\n### Query, {len(paths):,} entries, top 20 ({runs} runs)\n")
        print(
            "| query | substring scan (baseline), median (min–max) | FileIndex.search "
            "| × baseline | best match |"
        )
        print("|---|---:|---:|---:|---|")
        for query in QUERIES:
            typed = query.lower()
            scan = median_time(lambda typed=typed: [p for p in lowered if typed in p], runs)
            search = median_time(lambda query=query: index.search(query, 20), runs)
            best = index.search(query, 20)
            shown = best[0] if best else "(none)"
            print(
                f"| `{query}` | {fmt(scan, digits=2)} | {fmt(search, digits=2)} "
                f"| {search.ratio(scan):.2f} | `{shown}` |"
            )


if __name__ == "__main__":
    main()
