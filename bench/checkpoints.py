"""Checkpoint benchmark (issue 30): a snapshot of a 10,000-file repository with 10 changed
files, and restoring 100 changed files.

Run: ``python bench/checkpoints.py [--files 10000] [--runs 15] [--restore-runs 9]``.
Everything happens in a temporary folder: a generated repository (sizes from a few hundred
bytes to 64 kB, most a few kB, about 12 a folder, three deep), committed in its own ``.git``
as a user's project would be. Prints markdown tables; each figure is the median (min–max)
of the runs.
- snapshot: ``CheckpointStore.snapshot`` after 10 different files changed in each run
  (appended to, as an edit would); baseline in the same run: ``git status --porcelain`` in
  the user's own repository on the same tree (what the user's own tools pay to look at it).
- restore: a checkpoint, 100 files changed, a snapshot (as after the agent's step), then
  ``plan_restore`` and ``restore`` timed; baseline: writing the same 100 files in place with
  Python, without fsync (the floor for any approach).
Targets (issue 30): snapshot ≤ 50 ms; restoring 100 changed files ≤ 200 ms.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _stats import Summary, fmt, machine, verdict
from picode.session.checkpoints import CheckpointStore

WORDS = [
    "def",
    "return",
    "import",
    "class",
    "self",
    "value",
    "path",
    "error",
    "for",
    "in",
    "if",
    "else",
    "while",
    "data",
    "result",
    "config",
    "session",
    "file",
    "line",
    "None",
]
GIT_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


def generate(root: Path, count: int, rng: random.Random) -> list[Path]:
    files: list[Path] = []
    for n in range(count):
        # About 12 files a folder, three deep (8 × 10 × 10 leaves), as in most source trees.
        leaf = n % 800
        folder = root / f"pkg{leaf // 100}" / f"mod{leaf // 10 % 10}" / f"part{leaf % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        size = min(65_536, max(200, int(rng.lognormvariate(8.0, 1.0))))  # median ~3 kB
        words: list[str] = []
        length = 0
        while length < size:
            word = rng.choice(WORDS)
            words.append(word)
            length += len(word) + 1
        text = " ".join(words)
        lines = "\n".join(text[i : i + 72] for i in range(0, len(text), 72)) + "\n"
        path = folder / f"file{n:05d}.py"
        path.write_text(lines, encoding="utf-8")
        files.append(path)
    return files


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env=GIT_ENV, check=True, capture_output=True)


def timed(fn: object) -> float:
    assert callable(fn)
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--restore-runs", type=int, default=9)
    args = parser.parse_args()
    rng = random.Random(30)
    with tempfile.TemporaryDirectory(prefix="picode-bench-ckpt-") as temp:
        root = Path(temp) / "project"
        root.mkdir()
        print(f"generating {args.files:,} files ...", file=sys.stderr)
        files = generate(root, args.files, rng)
        total = sum(path.stat().st_size for path in files)
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "generated")
        store = CheckpointStore(root, Path(temp) / "store")
        first = timed(lambda: store.snapshot("bench", "first"))
        store.snapshot("bench", "warm")  # the stat cache settles, as from the second step on

        order = rng.sample(files, len(files))
        snaps: list[float] = []
        status: list[float] = []
        for run in range(args.runs):
            for path in order[run * 10 : run * 10 + 10]:
                with path.open("a", encoding="utf-8") as handle:
                    handle.write(f"# changed in run {run}\n")
            status.append(timed(lambda: git(root, "status", "--porcelain")))
            label = f"run {run}"
            snaps.append(timed(lambda label=label: store.snapshot("bench", label)))  # type: ignore[misc]
        unchanged = Summary.of([timed(lambda: store.snapshot("bench", "same")) for _ in range(5)])

        plans: list[float] = []
        restores: list[float] = []
        floors: list[float] = []
        start = args.runs * 10
        for run in range(args.restore_runs):
            batch = order[start + run * 100 : start + run * 100 + 100]
            checkpoint = store.snapshot("bench", f"before restore run {run}")
            old = {path: path.read_bytes() for path in batch}
            for path in batch:
                path.write_bytes(old[path] + b"# an agent's change\n")
            store.snapshot("bench", "after the step")
            begun = time.perf_counter()
            plan = store.plan_restore(checkpoint)
            planned = time.perf_counter()
            report = store.restore(plan)
            done = time.perf_counter()
            assert report.ok, report
            assert len(report.written) == 100, report
            assert all(path.read_bytes() == old[path] for path in batch)
            plans.append(planned - begun)
            restores.append(done - planned)
            floors.append(timed(lambda old=old: [p.write_bytes(b) for p, b in old.items()]))  # type: ignore[misc]

        snap = Summary.of(snaps)
        base = Summary.of(status)
        plan_s, restore_s = Summary.of(plans), Summary.of(restores)
        both = Summary.of([p + r for p, r in zip(plans, restores, strict=True)])
        floor = Summary.of(floors)
        print(machine())
        size = total / 2**20
        print(f"\n{args.files:,} files, {size:.1f} MB; first snapshot {first * 1e3:.0f} ms\n")
        print(f"### Snapshot, 10 files changed ({args.runs} runs)\n")
        print("| step | median (min–max) | × baseline | target |")
        print("|---|---:|---:|---|")
        print(f"| `git status --porcelain`, user's repo (baseline) | {fmt(base)} | 1.00 | |")
        print(
            f"| `snapshot`, 10 changed | {fmt(snap)} | {snap.ratio(base):.2f} | ≤ 50 ms: "
            f"{verdict(snap.median <= 0.050)} |"
        )
        print(f"| `snapshot`, nothing changed | {fmt(unchanged)} | {unchanged.ratio(base):.2f} | |")
        print(f"\n### Restore, 100 files changed ({args.restore_runs} runs)\n")
        print("| step | median (min–max) | × baseline | target |")
        print("|---|---:|---:|---|")
        print(f"| 100 files written in place, no fsync (baseline) | {fmt(floor)} | 1.00 | |")
        print(f"| `plan_restore` | {fmt(plan_s)} | {plan_s.ratio(floor):.2f} | |")
        print(f"| `restore` | {fmt(restore_s)} | {restore_s.ratio(floor):.2f} | |")
        print(
            f"| `plan_restore` + `restore` | {fmt(both)} | {both.ratio(floor):.2f} | ≤ 200 ms: "
            f"{verdict(both.median <= 0.200)} |"
        )


if __name__ == "__main__":
    main()
