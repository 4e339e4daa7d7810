"""``@`` file completion: an index of the project's files and a fast fuzzy search over it.

The index comes from ``rg --files`` (so ``.gitignore`` is honoured, even outside a git
repository, and ``.git/`` is skipped), built once in a background thread and kept until
``refresh()``. Folders are derived from the files and listed with a trailing ``/``.

Searching 50,000 paths per keystroke in Python needs two tricks:
- filtering is a C-level regex search over all paths joined into one string, jumping from
  one matching path to the next;
- paths are kept shortest first and no path can score more than ``_best_possible - len``,
  so the scan stops as soon as no later (longer) path can enter the top ``limit``.
"""

from __future__ import annotations

import heapq
import os
import re
import subprocess
import tempfile
import threading
import time
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from picode.tools.rg_path import find_rg

DEFAULT_MAX_FILES = 300_000

#: Score tiers; within a tier, shorter paths and tighter matches win.
_BASE_PREFIX = 1200
_BASE_SUBSTRING = 1000
_PATH_SUBSTRING = 600
_BASE_SUBSEQUENCE = 400
_PATH_SUBSEQUENCE = 200
_WORD_START_BONUS = 100
_SEPARATORS = frozenset("/_-. ")


class FileIndexError(RuntimeError):
    """The index could not be built; the message says why."""


@dataclass(slots=True)
class _Snapshot:
    paths: list[str]
    """Files and folders (``dir/``), shortest first, then alphabetical."""
    lowered: list[str]
    base_starts: list[int]
    """Where each path's last component starts."""
    text: str
    """``lowered``, each path preceded by a newline: what the filter regex runs over."""
    line_starts: list[int]
    """Offset of each path in ``text``, plus one past the end."""
    char_counts: dict[str, int]
    """How often each character occurs in ``text``: picks the filter's anchor."""
    file_count: int
    truncated: bool


class FileIndex:
    """The files under ``cwd`` for ``@`` completion.

    ``on_ready`` is called (from the indexing thread) whenever a build finishes, with or
    without an error; an app should hop back with ``call_from_thread``.
    """

    def __init__(
        self,
        cwd: Path,
        *,
        rg: str | None = None,
        include_dirs: bool = True,
        max_files: int = DEFAULT_MAX_FILES,
        on_ready: Callable[[], None] | None = None,
    ) -> None:
        self.cwd = cwd
        self.include_dirs = include_dirs
        self.max_files = max_files
        self.on_ready = on_ready
        self._rg = rg
        self._snapshot: _Snapshot | None = None
        self._lock = threading.Lock()
        self._building = False
        self._again = False
        self._done = threading.Event()
        self.error: str | None = None
        self.build_seconds: float | None = None

    # --- building --------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        return self._snapshot is not None

    @property
    def path_count(self) -> int:
        """Files and folders indexed (0 before the first build)."""
        snapshot = self._snapshot
        return len(snapshot.paths) if snapshot is not None else 0

    @property
    def truncated(self) -> bool:
        """More than ``max_files`` files: the rest are not indexed."""
        snapshot = self._snapshot
        return snapshot is not None and snapshot.truncated

    def start(self) -> None:
        """Build the index in the background unless it exists or is being built."""
        with self._lock:
            if self._snapshot is not None or self._building:
                return
        self.refresh()

    def refresh(self) -> None:
        """Rebuild in the background; the old index answers searches meanwhile."""
        with self._lock:
            if self._building:
                self._again = True
                return
            self._building = True
            self._done.clear()
        threading.Thread(target=self._build_loop, name="picode-file-index", daemon=True).start()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the current build finishes; False on timeout."""
        return self._done.wait(timeout)

    def build_now(self) -> None:
        """Build in the calling thread (tests, benchmarks); raises FileIndexError."""
        started = time.perf_counter()
        self._snapshot = _make_snapshot(*self._list_files(), include_dirs=self.include_dirs)
        self.build_seconds = time.perf_counter() - started
        self.error = None

    def _build_loop(self) -> None:
        while True:
            try:
                self.build_now()
            except FileIndexError as exc:
                self.error = str(exc)
            except Exception as exc:  # a bug must not kill completion silently
                self.error = f"Indexing files failed: {type(exc).__name__}: {exc}"
            with self._lock:
                if not self._again:
                    self._building = False
                    self._done.set()
                    break
                self._again = False
        if self.on_ready is not None:
            self.on_ready()

    def _list_files(self) -> tuple[list[str], bool]:
        binary = self._rg or find_rg()
        if binary is None:
            raise FileIndexError(
                "File completion needs ripgrep (rg): install the `ripgrep` Python package or "
                "put rg on PATH."
            )
        command = [
            binary,
            "--files",
            "--hidden",
            "--no-require-git",
            "--no-config",
            "--null",
            "--glob",
            "!.git",
        ]
        # stderr goes to a file: many unreadable folders could fill a pipe and stall rg.
        with tempfile.TemporaryFile() as errors:
            try:
                process = subprocess.Popen(
                    command,
                    cwd=self.cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=errors,
                )
            except OSError as exc:
                raise FileIndexError(f"Cannot run {binary} in {self.cwd}: {exc}") from None
            assert process.stdout is not None
            chunks: list[bytes] = []
            count = 0
            truncated = False
            while chunk := process.stdout.read(1 << 16):
                chunks.append(chunk)
                count += chunk.count(b"\0")
                if count > self.max_files:
                    truncated = True
                    process.kill()
                    break
            process.stdout.close()
            returncode = process.wait()
            errors.seek(0)
            stderr = errors.read(8192).decode("utf-8", "replace")
        # One decode for everything: per-path decoding costs more than rg itself.
        paths = [path for path in os.fsdecode(b"".join(chunks)).split("\0") if path]
        if truncated:
            paths = paths[: self.max_files]
        # rg exits 1 for "no files" and 2 when some folders were unreadable: both may still
        # have listed what it could.
        if returncode not in (0, 1) and not paths:
            detail = stderr.strip().splitlines()[0] if stderr.strip() else f"exit {returncode}"
            raise FileIndexError(f"Listing files in {self.cwd} failed: {detail}")
        if os.sep != "/":
            paths = [path.replace(os.sep, "/") for path in paths]
        return paths, truncated

    # --- searching -------------------------------------------------------------------

    def files(self) -> list[str]:
        snapshot = self._snapshot
        if snapshot is None:
            return []
        return [path for path in snapshot.paths if not path.endswith("/")]

    def search(self, query: str, limit: int = 20) -> list[str]:
        """Paths matching ``query`` (its characters in order), best first.

        Before the index exists this starts building it and returns ``[]``.
        """
        snapshot = self._snapshot
        if snapshot is None:
            self.start()
            return []
        if limit <= 0:
            return []
        typed = "".join(query.split()).lower()
        if not typed:
            return snapshot.paths[:limit]
        text = snapshot.text
        if any(char not in text for char in set(typed)):
            return []  # a character no path has: skip the scan
        line_starts = snapshot.line_starts
        lowered = snapshot.lowered
        base_starts = snapshot.base_starts
        search = _filter_pattern(typed, snapshot.char_counts, len(lowered)).search
        sub_pattern = _subsequence_pattern(typed)
        ceiling = _best_possible(typed, typed in text)
        worst_kept: list[tuple[int, int]] = []  # min-heap of (score, -index)
        position = 0
        while (found := search(text, position)) is not None:
            index = bisect_right(line_starts, found.start() + 1) - 1
            position = line_starts[index + 1] - 1
            path = lowered[index]
            if len(worst_kept) == limit and ceiling - len(path) < worst_kept[0][0]:
                break  # every later path is at least as long: none can enter the top
            entry = (_score(typed, path, base_starts[index], sub_pattern), -index)
            if len(worst_kept) < limit:
                heapq.heappush(worst_kept, entry)
            elif entry > worst_kept[0]:
                heapq.heapreplace(worst_kept, entry)
        best = sorted(worst_kept, reverse=True)
        return [snapshot.paths[-negative] for _, negative in best]


def _make_snapshot(files: list[str], truncated: bool, *, include_dirs: bool) -> _Snapshot:
    entries = set(files)
    file_count = len(entries)
    if include_dirs:
        folders: set[str] = set()
        for path in files:
            cut = path.rfind("/")
            while cut > 0:
                folder = path[: cut + 1]
                if folder in folders:
                    break
                folders.add(folder)
                cut = path.rfind("/", 0, cut)
        entries |= folders
    # Shortest first, then alphabetical: two stable sorts with C-level keys beat one sort
    # keyed on (len, path) tuples.
    paths = sorted(entries)
    paths.sort(key=len)
    lowered = [path.lower().replace("\n", " ") for path in paths]
    base_starts = [path.rfind("/", 0, len(path) - 1) + 1 for path in lowered]
    line_starts: list[int] = []
    offset = 1
    for path in lowered:
        line_starts.append(offset)
        offset += len(path) + 1
    line_starts.append(offset)
    text = "".join("\n" + path for path in lowered)
    return _Snapshot(
        paths=paths,
        lowered=lowered,
        base_starts=base_starts,
        text=text,
        line_starts=line_starts,
        char_counts={char: text.count(char) for char in set(text)},
        file_count=file_count,
        truncated=truncated,
    )


def _filter_pattern(typed: str, char_counts: dict[str, int], lines: int) -> re.Pattern[str]:
    """A regex finding, in ``text``, the paths that hold ``typed``'s characters in order.

    "[^c\\n]*+c" per character is possessive and cannot cross a newline: a path that cannot
    match is given up after one linear scan, never backtracked through. The pattern starts
    with a literal so the regex engine can jump to candidates at C speed: the first
    character when it is rare (most paths are skipped outright), else the newline before
    each path (each path is tried once, rather than once per occurrence of a common
    first character).
    """
    steps = "".join(f"[^{_in_class(c)}\\n]*+{re.escape(c)}" for c in typed[1:])
    if char_counts.get(typed[0], 0) < lines:
        return re.compile(re.escape(typed[0]) + steps)
    return re.compile(f"\\n[^{_in_class(typed[0])}\\n]*+{re.escape(typed[0])}" + steps)


def _best_possible(typed: str, appears_whole: bool) -> int:
    """The highest score any path can get, for stopping the scan early."""
    if "/" in typed.rstrip("/"):  # a last path component never holds an inner "/"
        return _PATH_SUBSTRING + _WORD_START_BONUS if appears_whole else _PATH_SUBSEQUENCE
    return _BASE_PREFIX if appears_whole else _BASE_SUBSEQUENCE


def _subsequence_pattern(typed: str) -> re.Pattern[str]:
    first, rest = typed[0], typed[1:]
    body = "".join(f"[^{_in_class(c)}]*+{re.escape(c)}" for c in rest)
    return re.compile(f"[^{_in_class(first)}]*+({re.escape(first)}){body}")


def _in_class(char: str) -> str:
    return "\\" + char if char in "\\]^-[" else char


def _score(typed: str, path: str, base_start: int, sub_pattern: re.Pattern[str]) -> int:
    base = path[base_start:]
    at = base.find(typed)
    if at == 0:
        value = _BASE_PREFIX
    elif at > 0:
        value = _BASE_SUBSTRING + (_WORD_START_BONUS if base[at - 1] in _SEPARATORS else 0)
    else:
        at = path.find(typed)
        if at >= 0:
            starts_word = at == 0 or path[at - 1] in _SEPARATORS
            value = _PATH_SUBSTRING + (_WORD_START_BONUS if starts_word else 0)
        else:
            in_base = sub_pattern.match(base)
            found = in_base or sub_pattern.match(path)
            tier = _BASE_SUBSEQUENCE if in_base else _PATH_SUBSEQUENCE
            spread = (found.end() - found.start(1) - len(typed)) if found else 99
            value = tier - min(spread, 99) * 2
    return value - len(path)
