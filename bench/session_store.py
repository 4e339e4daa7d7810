"""Session store benchmark: resume a 128 MB session, list 1,000 sessions (SPEC §8).

Run: ``python bench/session_store.py [--size-mb 128] [--sessions 1000] [--runs 5]``.
Everything happens in a temporary folder; prints markdown tables. Each timing is the
median (min–max) of ``--runs`` runs, next to a baseline measured in the same run:
- resume: reading the file's bytes once (``Path.read_bytes``), the floor for any approach
  that looks at the whole file;
- listing: ``stat`` of every session file, the floor for noticing changes at all.
Targets (SPEC §8): resume < 1 s (open, model context, the tail the TUI draws), list < 0.3 s
(with the index kept next to the sessions, one of them grown since it was written). The
TUI's whole resume, widgets included, is measured by ``tui_memory.py --size-mb 128``.
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _stats import Summary, fmt, machine, verdict
from picode.ai.types import (
    AssistantMessage,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from picode.session.store.sessions import SessionFile, SessionStore

WORDS = (
    "the",
    "session",
    "file",
    "keeps",
    "every",
    "message",
    "so",
    "picode",
    "can",
    "resume",
    "where",
    "you",
    "left",
    "off",
    "def",
    "return",
    "import",
    "class",
    "self",
    "value",
    "error",
    "path",
    "line",
    "read",
    "write",
    "edit",
    "bash",
    "grep",
    "find",
    "test",
    "assert",
    "None",
    "True",
    "False",
    "async",
    "await",
    "json",
    "dict",
    "list",
    "str",
    "int",
    "model",
    "token",
    "context",
    "compaction",
    "summary",
    "नमस्ते",
    "漢字",
    "🦀",
    "ünïcödé",
)


class TextSource:
    """Cheap varied text: random windows into one pre-generated corpus."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.corpus = " ".join(rng.choice(WORDS) for _ in range(400_000))

    def text(self, size: int) -> str:
        start = self.rng.randrange(0, len(self.corpus) - size - 1)
        return self.corpus[start : start + size]

    def size(self, median: int, spread: float = 1.0, cap: int = 400_000) -> int:
        return max(8, min(cap, int(self.rng.lognormvariate(0, spread) * median)))


def one_turn(source: TextSource, turn: int) -> list[Message]:
    """A user prompt, then a few tool-using assistant steps: the shape of real sessions."""
    rng = source.rng
    out: list[Message] = [UserMessage(source.text(source.size(300)))]
    for step in range(rng.randint(1, 6)):
        calls = [
            ToolCall(
                f"call_{turn}_{step}_{k}",
                rng.choice(["read", "bash", "edit", "grep"]),
                {"path": f"src/mod_{k}.py", "text": source.text(source.size(200))},
            )
            for k in range(rng.choice([0, 1, 1, 2]))
        ]
        out.append(
            AssistantMessage(
                [
                    ThinkingContent(source.text(source.size(600)), "sig"),
                    TextContent(source.text(source.size(400))),
                    *calls,
                ],
                api="anthropic-messages",
                provider="anthropic",
                model="claude-sonnet-4-5",
                usage=Usage(input=1000, output=200, total_tokens=1200),
                stop_reason="toolUse" if calls else "stop",
            )
        )
        out.extend(
            ToolResultMessage(
                call.id,
                call.name,
                [TextContent(source.text(source.size(3000, 1.4)))],
                {"exit_code": 0},
            )
            for call in calls
        )
        if not calls:
            break
    return out


def write_session(
    store: SessionStore,
    cwd: Path,
    source: TextSource,
    target_bytes: int,
    compact_every: int,
    max_messages: int | None = None,
) -> SessionFile:
    """Append turns until the file reaches ``target_bytes`` (or ``max_messages`` messages),
    compacting like a real agent whenever ``compact_every`` bytes piled up (0: never)."""
    session = store.create(cwd)
    session.append_model_change("anthropic", "claude-sonnet-4-5")
    since_compaction: list[tuple[str, int]] = []
    written = turn = count = 0
    while written < target_bytes and (max_messages is None or count < max_messages):
        for message in one_turn(source, turn):
            if max_messages is not None and count >= max_messages:
                break
            entry_id = session.append_message(message)
            count += 1
            size = len(message.text) + 200
            since_compaction.append((entry_id, size))
            written += size
        turn += 1
        if compact_every and sum(size for _, size in since_compaction) > compact_every:
            # Keep roughly the last 20 % of the context, starting at a whole message.
            keep, kept_bytes = len(since_compaction), 0
            while keep > 1 and kept_bytes < compact_every // 5:
                keep -= 1
                kept_bytes += since_compaction[keep][1]
            first_kept = since_compaction[keep][0]
            session.append_compaction(
                source.text(4000), first_kept, 150_000, {"read_files": [], "modified_files": []}
            )
            since_compaction = since_compaction[keep:]
        if turn % 200 == 0:
            written = session.path.stat().st_size
    session.close()
    return session


def median_time(action: Callable[[], object], runs: int) -> tuple[Summary, Summary]:
    """Wall-clock and CPU seconds over ``runs`` runs (CPU is steadier on a busy machine)."""
    walls, cpus = [], []
    for _ in range(runs):
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        action()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return Summary.of(walls), Summary.of(cpus)


#: The rows the SPEC §8 targets apply to (what the TUI does to resume and to list).
RESUME_ROW = "open + build_context + tail(50)"
LIST_ROW = "list() with the index"

Row = tuple[str, tuple[Summary, Summary]]


def bench_resume(root: Path, size_mb: int, runs: int) -> list[Row]:
    store = SessionStore(root / "big")
    source = TextSource(random.Random(1))
    print(f"generating a {size_mb} MB session ...", file=sys.stderr)
    made = write_session(store, root / "proj", source, size_mb << 20, compact_every=600_000)
    path = made.path
    size = path.stat().st_size
    probe = store.open(path)
    context = probe.build_context()
    print(
        f"  {size / 2**20:.0f} MB, {len(probe)} entries, {len(context.display_messages)} "
        f"messages on the branch, {len(context.messages)} in the model context",
        file=sys.stderr,
    )

    def resume() -> None:
        store.open(path).build_context()

    def resume_and_tail() -> None:
        store.open(path).build_context().display_messages.tail(50)

    def open_and_tail() -> None:
        store.open(path).branch_messages().tail(50)

    rows = [
        ("read the file's bytes once (baseline)", median_time(path.read_bytes, runs)),
        ("open + build_context", median_time(resume, runs)),
        ("open + tail(50), nothing else parsed", median_time(open_and_tail, runs)),
        (RESUME_ROW, median_time(resume_and_tail, runs)),
        (
            "full parse: open + entries() (for comparison)",
            median_time(lambda: store.open(path).entries(), max(1, runs // 2)),
        ),
    ]
    return rows


def bench_list(root: Path, sessions: int, runs: int) -> list[Row]:
    store = SessionStore(root / "many")
    source = TextSource(random.Random(2))
    print(f"generating {sessions} sessions ...", file=sys.stderr)
    folders = [root / f"project-{n}" for n in range(20)]
    for index in range(sessions):
        session = store.create(folders[index % len(folders)])
        for turn in range(source.rng.randint(1, 8)):
            for message in one_turn(source, turn):
                session.append_message(message)
        if index % 5 == 0:
            session.append_session_info(f"session {index}")
        session.close()
    files = sorted(store.sessions_dir.rglob("*.jsonl"))
    total = sum(f.stat().st_size for f in files)
    print(f"  {len(files)} files, {total / 2**20:.0f} MB", file=sys.stderr)

    def stat_all() -> None:
        for folder in store.sessions_dir.iterdir():
            for file in folder.glob("*.jsonl"):
                file.stat()

    def read_all() -> None:
        for file in files:
            file.read_bytes()

    for index_file in store.sessions_dir.glob("*/.index.json"):
        index_file.unlink()
    listed: list[object] = []
    cold = median_time(lambda: listed.extend(store.list()), 1)
    assert len(listed) == sessions

    # One session grew since the last listing: the usual case when the picker opens.
    grown = store.open(files[0])
    grown.append_message(UserMessage("one more"))
    grown.close()

    rows = [
        ("stat every session file (baseline)", median_time(stat_all, runs)),
        ("read every session file's bytes", median_time(read_all, runs)),
        ("list() first time, no index yet", cold),
        (LIST_ROW, median_time(store.list, runs)),
        ("list(cwd) of one of 20 projects", median_time(lambda: store.list(folders[0]), runs)),
    ]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mb", type=int, default=128)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="picode-bench-") as tmp:
        root = Path(tmp)
        resume_rows = bench_resume(root, args.size_mb, args.runs)
        list_rows = bench_list(root, args.sessions, args.runs)
    print(machine())
    print_table(
        f"Resume a {args.size_mb} MB session ({args.runs} runs)", resume_rows, (RESUME_ROW, 1.0)
    )
    print_table(f"List {args.sessions:,} sessions ({args.runs} runs)", list_rows, (LIST_ROW, 0.3))


def print_table(title: str, rows: list[Row], target: tuple[str, float] | None = None) -> None:
    """``target``: (the row it applies to, seconds)."""
    base_wall, base_cpu = rows[0][1]
    print(f"\n### {title}\n")
    print("| step | wall, median (min–max) | × baseline | CPU, median | × baseline | target |")
    print("|---|---:|---:|---:|---:|---|")
    for name, (wall, cpu) in rows:
        goal = ""
        if target is not None and name == target[0]:
            goal = f"< {target[1] * 1000:.0f} ms: {verdict(wall.median < target[1])}"
        print(
            f"| {name} | {fmt(wall)} | {wall.ratio(base_wall):.2f} "
            f"| {cpu.median * 1000:.1f} ms | {cpu.ratio(base_cpu):.2f} | {goal} |"
        )


if __name__ == "__main__":
    main()
