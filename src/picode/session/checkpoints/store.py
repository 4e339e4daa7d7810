"""``CheckpointStore``: snapshots of a project's files in a shadow git repository, and
restoring them (the package docstring describes the policy)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Collection, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from picode.ai.untrusted import safe
from picode.session.checkpoints.capture import capture
from picode.session.checkpoints.excludes import Excluded
from picode.session.checkpoints.git import CheckpointError, ShadowGit
from picode.session.checkpoints.plan import (
    GITLINK_MODE,
    LINK_MODE,
    KeptPath,
    PathChange,
    RestorePlan,
    RestoreReport,
    parse_diff,
)
from picode.session.checkpoints.writer import (
    Journal,
    UnsafePathError,
    fsync_folder,
    parts_of,
    put_in_place,
    remove_empty_parents,
    target_of,
    temp_for,
    write_temp,
)

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: one process per project is assumed
    fcntl = None  # type: ignore[assignment]

_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_SESSION = re.compile(r"[A-Za-z0-9_-]{1,64}")
_REFS = "refs/picode"
_FLUSHERS = 8


def session_key(session_id: str) -> str:
    """The folder of a session's refs: its id when that is a safe ref name, else a hash."""
    if _SESSION.fullmatch(session_id):
        return session_id
    return "h-" + hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _is_file(path: Path) -> bool:
    """Something other than a folder is at ``path`` (a folder in the way of a file the
    checkpoint has is removed if a restore leaves it empty, refused if not)."""
    try:
        return not stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def blob_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class CheckpointStore:
    """Checkpoints of the files under ``root``, kept in ``store_dir/<key of root>/``."""

    def __init__(
        self,
        root: Path,
        store_dir: Path,
        *,
        max_file_bytes: int = 10 * 2**20,
        max_checkpoints: int = 200,
        max_store_bytes: int = 2 * 2**30,
        timeout: float = 60.0,
    ) -> None:
        self.root = Path(root).resolve()
        self.max_file_bytes = max_file_bytes
        self.max_checkpoints = max_checkpoints
        self.max_store_bytes = max_store_bytes
        key = hashlib.sha256(os.fsencode(self.root)).hexdigest()[:24]
        self.git_dir = Path(store_dir).absolute() / key
        self._git = ShadowGit(self.git_dir, self.root, timeout=timeout)
        self._excluded = Excluded(self.git_dir, self.root, max_file_bytes)
        self._journal = Journal(self.git_dir / "picode-restore-journal")
        self._thread_lock = threading.RLock()
        self._ready = False
        self._pool: ThreadPoolExecutor | None = None

    # -- taking -------------------------------------------------------------------------

    def snapshot(self, session_id: str, label: str) -> str:
        """Record the project's files now; the id of the checkpoint (a commit of the shadow
        repository). Raises CheckpointError when it cannot (no git, a timeout, a failure)."""
        with self._locked():
            commit, _ = self._capture(label, session_id)
            self._write_ref(session_key(session_id), commit)
            return commit

    def stop(self) -> None:
        """Stop what runs now and refuse what comes (the session is closing while a warm-up
        still reads a large project): those operations fail with CheckpointError. Any thread
        may call this, without the lock."""
        self._git.stop()

    def warm(self) -> None:
        """Read the project's files into the shadow index without keeping a checkpoint, so
        that the next snapshot reads only what changed (a project's first capture reads every
        file). Raises CheckpointError like ``snapshot``."""
        with self._locked():
            self._capture("warming up")

    def _capture(self, label: str, session_id: str = "") -> tuple[str, str]:
        """The files now as a commit (not yet a checkpoint): (commit, tree). Its message
        keeps the label, and the files left out for their size, which a restore must not
        take for files created since."""
        message = f"{' '.join(label.split())[:200] or 'checkpoint'}\n\nsession: {session_id}\n"
        return capture(self._git, self._excluded, message)

    def _write_ref(self, key: str, commit: str) -> None:
        # A loose ref is one file; written directly it costs no git process. The name is the
        # time, so a session's refs sort oldest first.
        folder = self.git_dir / _REFS / key
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{time.time_ns():020d}"
        while (folder / name).exists():
            name = f"{int(name) + 1:020d}"
        temp = folder / f".{name}.tmp"
        temp.write_text(commit + "\n", encoding="ascii")
        os.replace(temp, folder / name)

    # -- reading ------------------------------------------------------------------------

    def _commit(self, checkpoint: str) -> tuple[str, set[str]]:
        """The tree of ``checkpoint`` and the files it left out for their size."""
        if not _SHA.fullmatch(checkpoint):
            raise CheckpointError(f"{checkpoint!r} is not a checkpoint id")
        try:
            text = self._git.run("cat-file", "commit", checkpoint).decode("utf-8", "replace")
        except CheckpointError as exc:
            raise CheckpointError("that checkpoint no longer exists (it was pruned)") from exc
        tree = text.split("\n", 1)[0].removeprefix("tree ").strip()
        too_large: set[str] = set()
        for line in text.splitlines():
            if line.startswith("too-large: "):
                with contextlib.suppress(ValueError):
                    too_large = set(json.loads(line.removeprefix("too-large: ")))
        return tree, too_large

    def plan_restore(self, checkpoint: str) -> RestorePlan:
        """What restoring ``checkpoint`` would change; nothing in the project is written."""
        with self._locked():
            tree, too_large_then = self._commit(checkpoint)
            _, current = self._capture("planning a restore")
            output = self._git.run(
                "diff-tree", "-r", "-z", "--no-renames", "--raw", "--numstat", current, tree
            )
            changes, kept = self._leave_alone(parse_diff(output), tree, too_large_then)
            return RestorePlan(self.root, checkpoint, tree, current, tuple(changes), tuple(kept))

    def diff_text(self, plan: RestorePlan, path: str) -> str:
        """The unified diff a restore makes to ``path`` (from now to the checkpoint), made
        safe for a terminal."""
        with self._locked():
            output = self._git.run(
                "diff-tree", "-p", "--no-color", "--no-renames", plan.current_tree, plan.tree,
                "--", f":(literal){path}",
            )  # fmt: skip
        return safe(output.decode("utf-8", "replace"))

    def hand_edits(self, since: str) -> list[str]:
        """The paths whose content differs from checkpoint ``since`` now."""
        with self._locked():
            tree, _ = self._commit(since)
            _, current = self._capture("looking for hand edits")
            output = self._git.run("diff-tree", "-r", "-z", "--no-renames", "--name-only", tree,
                                   current)  # fmt: skip
            return sorted(os.fsdecode(item) for item in output.split(b"\0") if item)

    def _leave_alone(
        self, changes: list[PathChange], tree: str, too_large_then: set[str]
    ) -> tuple[list[PathChange], list[KeptPath]]:
        """Split off the paths a restore must not touch: see the package docstring."""
        keep: list[PathChange] = []
        kept: list[KeptPath] = []
        for change in changes:
            if GITLINK_MODE in (change.mode, change.current_mode):
                kept.append(KeptPath(change.path, "inside a nested git repository"))
            elif change.action == "recreate" and _is_file(self.root / change.path):
                kept.append(KeptPath(change.path, "exists now but is not in checkpoints "
                                     "(too large, ignored or in a nested repository)"))  # fmt: skip
            elif change.action == "delete" and change.path in too_large_then:
                kept.append(KeptPath(change.path, "was too large for the checkpoint"))
            else:
                keep.append(change)
        rules_changed = any(c.path.rsplit("/", 1)[-1] == ".gitignore" for c in changes)
        deletions = [c.path for c in keep if c.action == "delete"]
        if rules_changed and deletions:
            ignored = self._ignored_then(tree, deletions)
            kept += [KeptPath(p, "was ignored when the checkpoint was taken") for p in ignored]
            keep = [c for c in keep if c.path not in ignored]
        return keep, kept

    def _ignored_then(self, tree: str, paths: list[str]) -> set[str]:
        """Which of ``paths`` the checkpoint's ``.gitignore`` files ignore: those existed then
        unseen, so a restore must not delete them as created since."""
        listing = self._git.run("ls-tree", "-r", "-z", tree)
        rules: dict[str, str] = {}
        for item in listing.split(b"\0"):
            meta, _, name = item.partition(b"\t")
            path = os.fsdecode(name)
            if path.rsplit("/", 1)[-1] == ".gitignore" and meta.startswith(b"100"):
                rules[path] = meta.split()[2].decode()
        blobs = self._git.cat_blobs(list(rules.values()))
        with tempfile.TemporaryDirectory(dir=self.git_dir) as scratch:
            for path, sha in rules.items():
                file = Path(scratch, *path.split("/"))
                file.parent.mkdir(parents=True, exist_ok=True)
                file.write_bytes(blobs[sha])
            listing = b"".join(os.fsencode(p) + b"\0" for p in paths)
            output = self._git.run("check-ignore", "-z", "--stdin", "--no-index",
                                   stdin=listing, work_tree=Path(scratch), ok=(0, 1))  # fmt: skip
        return {os.fsdecode(item) for item in output.split(b"\0") if item}

    # -- restoring ----------------------------------------------------------------------

    def restore(self, plan: RestorePlan, *, skip: Collection[str] = ()) -> RestoreReport:
        """Apply ``plan`` except the paths in ``skip``. A path that changed since the plan was
        made, or that is unsafe, is left as it is and listed in ``failed``."""
        if plan.root != self.root:
            raise CheckpointError("that plan was made for another project")
        report = RestoreReport()
        with self._locked():
            todo: list[PathChange] = []
            for change in plan.changes:
                if change.path in skip:
                    report.skipped.append(change.path)
                    continue
                try:
                    problem = self._differs_from_plan(change)
                except (UnsafePathError, OSError) as exc:
                    problem = str(exc)
                if problem is None:
                    todo.append(change)
                else:
                    report.failed.append((change.path, problem))
            # Deletions first: a file may be where the checkpoint has a folder, and the reverse.
            self._delete([change for change in todo if change.action == "delete"], report)
            self._write([change for change in todo if change.action != "delete"], report)
        return report

    def _differs_from_plan(self, change: PathChange) -> str | None:
        """Why ``change`` may no longer be applied (the file changed since), or None. Raises
        UnsafePathError for a path a restore must not touch."""
        parts_of(change.path)
        if change.action == "recreate":
            # Its folders may not exist yet or be a file deleted first; ``_write`` checks them.
            return (
                "it was created again since the plan" if _is_file(self.root / change.path) else None
            )
        target = target_of(self.root, change.path, create=False)
        if target is None:
            return "it was removed since the plan"
        try:
            info = os.lstat(target)
        except FileNotFoundError:
            return "it was removed since the plan"
        if stat.S_ISLNK(info.st_mode):
            now = blob_sha(os.fsencode(os.readlink(target)))
            is_link = True
        elif stat.S_ISREG(info.st_mode):
            now = blob_sha(target.read_bytes())
            is_link = False
        else:
            return "it is not a file"
        if now != change.current_blob or is_link != (change.current_mode == LINK_MODE):
            return "it changed since the plan was made"
        return None

    def _delete(self, items: list[PathChange], report: RestoreReport) -> None:
        for change in items:
            try:
                target = target_of(self.root, change.path, create=False)
                if target is None:
                    raise FileNotFoundError(f"{change.path} is gone")
                os.unlink(target)
            except (UnsafePathError, OSError) as exc:
                report.failed.append((change.path, str(exc)))
                continue
            report.deleted.append(change.path)
            remove_empty_parents(self.root, change.path)

    def _write(self, items: list[PathChange], report: RestoreReport) -> None:
        if not items:
            return
        blobs = self._git.cat_blobs([change.blob for change in items])
        staged: list[tuple[PathChange, Path, Path]] = []
        planned: list[tuple[PathChange, Path]] = []
        for change in items:
            try:
                target = target_of(self.root, change.path, create=True)
            except (UnsafePathError, OSError) as exc:
                report.failed.append((change.path, str(exc)))
                continue
            assert target is not None
            planned.append((change, target))
        temps = [temp_for(target) for _, target in planned]
        # Listed before any exists, so a restore killed at any point leaves nothing unlisted.
        self._journal.record(temps)

        def stage(item: tuple[tuple[PathChange, Path], Path]) -> OSError | None:
            (change, target), temp = item
            try:
                write_temp(temp, target, blobs[change.blob], change.mode)
            except OSError as exc:
                return exc
            return None

        # The fsyncs overlap in threads: the file system commits them together, so 100 files
        # cost a few flushes, not 100 in a row.
        jobs = list(zip(planned, temps, strict=True))
        outcomes = list(self._flushers().map(stage, jobs))
        for ((change, target), temp), error in zip(jobs, outcomes, strict=True):
            if error is not None:
                report.failed.append((change.path, error.strerror or str(error)))
            else:
                staged.append((change, target, temp))
        folders: set[Path] = set()
        for change, target, temp in staged:
            try:
                put_in_place(temp, target)
            except (UnsafePathError, OSError) as exc:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
                report.failed.append((change.path, str(exc)))
                continue
            report.written.append(change.path)
            folders.add(target.parent)
        list(self._flushers().map(fsync_folder, folders))
        self._journal.clear()

    def _flushers(self) -> ThreadPoolExecutor:
        # Kept between restores: starting the threads costs more than the flushes they save.
        if self._pool is None:
            self._pool = ThreadPoolExecutor(_FLUSHERS, thread_name_prefix="picode-restore")
        return self._pool

    # -- storage ------------------------------------------------------------------------

    def forget_session(self, session_id: str) -> None:
        """Drop the checkpoints of ``session_id`` and reclaim their storage."""
        with self._locked():
            folder = self.git_dir / _REFS / session_key(session_id)
            if folder.exists():
                shutil.rmtree(folder)
                self._gc()

    def prune(self, live_sessions: Collection[str]) -> None:
        """Drop the checkpoints of sessions not in ``live_sessions``, keep each session's
        newest ``max_checkpoints``, and the store under ``max_store_bytes``."""
        with self._locked():
            live = {session_key(session) for session in live_sessions}
            refs = self.git_dir / _REFS
            dropped = False
            for folder in list(refs.iterdir()) if refs.exists() else []:
                if folder.name not in live:
                    shutil.rmtree(folder)
                    dropped = True
                    continue
                names = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))
                for name in names[: max(0, len(names) - self.max_checkpoints)]:
                    (folder / name).unlink()
                    dropped = True
            if dropped or self._loose_objects() > 20_000:
                self._gc()
            while self._size() > self.max_store_bytes and self._drop_oldest():
                self._gc()

    def _drop_oldest(self) -> bool:
        """Remove the oldest half of all checkpoints; False when there were none."""
        every = sorted(
            (ref.name, ref)
            for folder in (self.git_dir / _REFS).glob("*")
            for ref in folder.iterdir()
            if not ref.name.startswith(".")
        )
        for _, ref in every[: max(1, len(every) // 2)]:
            ref.unlink()
        return bool(every)

    def _gc(self) -> None:
        self._git.run("gc", "--quiet", "--prune=now")

    def _loose_objects(self) -> int:
        output = self._git.run("count-objects").decode()
        return int(output.split()[0]) if output.split() else 0

    def _size(self) -> int:
        total = 0
        for folder, _, files in os.walk(self.git_dir):
            for name in files:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(folder, name)).st_size
        return total

    # -- locking and setup --------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """One operation at a time: across threads, and across picode processes sharing
        the project (they share its shadow index)."""
        with self._thread_lock:
            try:
                self.git_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
                fd = os.open(self.git_dir / "picode.lock", os.O_RDWR | os.O_CREAT, 0o600)
            except OSError as exc:
                raise CheckpointError(f"the checkpoint store cannot be written: {exc}") from exc
            try:
                if fcntl is not None:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                self._prepare()
                yield
            finally:
                os.close(fd)

    def _prepare(self) -> None:
        if not self.root.is_dir():
            raise CheckpointError(f"the project folder {self.root} does not exist")
        if not self._ready:
            if not (self.git_dir / "objects").is_dir():
                self._git.init()
                (self.git_dir / "picode-root").write_text(str(self.root) + "\n", "utf-8")
            self._ready = True
        # Under the lock nothing else of ours runs git here: a lock file is a killed git's.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.git_dir / "picode-index.lock")
        self._journal.recover()
