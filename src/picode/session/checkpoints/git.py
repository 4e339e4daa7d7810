"""The shadow repository's git: one place that runs git, always with a timeout, never on the
user's repository, config, hooks or index.

Every call names the shadow ``--git-dir`` and the project as ``--work-tree``, and its own
index file (``GIT_INDEX_FILE``). The user's and the system's git config are not read
(``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL`` set to the null device), nor their global
ignore file (``core.excludesFile``), so what a checkpoint holds does not depend on them; the
``GIT_*`` variables of the environment picode was started from (a hook sets ``GIT_DIR``) are
dropped for the same reason.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shutil
import signal
import subprocess
import threading
import time
import zlib
from collections.abc import Sequence
from pathlib import Path


class CheckpointError(Exception):
    """A checkpoint could not be taken, read or restored; the message says why, for a person."""


class CheckpointTimeout(CheckpointError):
    """git took longer than its time limit (a folder too large to checkpoint in time)."""


#: Passed as ``-c`` on every call. Hooks off (the shadow has none, but a template could add
#: some); no line-ending or filter conversion, so a restore gives back the bytes taken; the
#: untracked cache and preloading make a snapshot of an unchanged tree cost stats, not reads;
#: a split index in version 4 makes each of a snapshot's index writes small (a shared index
#: no longer used is deleted at once, not after git's default two weeks);
#: no automatic gc (``prune`` decides); refs stay loose files so a session's are one folder.
_CONFIG = (
    "core.hooksPath=" + os.devnull,
    "core.excludesFile=" + os.devnull,
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.fsmonitor=false",
    "core.untrackedCache=true",
    "core.preloadIndex=true",
    "core.splitIndex=true",
    "splitIndex.sharedIndexExpire=now",
    "index.version=4",
    "core.quotePath=false",
    "core.symlinks=true",
    "core.logAllRefUpdates=false",
    "core.attributesFile=" + os.devnull,
    "gc.auto=0",
    "gc.packRefs=false",
    "advice.addEmbeddedRepo=false",
    "safe.directory=*",
    "user.name=picode",
    "user.email=picode@localhost",
)


class ShadowGit:
    """git on the shadow repository ``git_dir`` with ``work_tree`` as the tree it reads."""

    def __init__(self, git_dir: Path, work_tree: Path, *, timeout: float) -> None:
        self.git_dir = git_dir
        self.work_tree = work_tree
        self.timeout = timeout
        self.index_file = git_dir / "picode-index"
        self._exe: str | None = None
        #: The git processes running now, so ``stop`` can end them.
        self._live: set[subprocess.Popen[bytes]] = set()
        self._live_lock = threading.Lock()
        self._stopped = False

    def stop(self) -> None:
        """End the git processes running now and refuse new ones: the operations fail with
        CheckpointError (a capture cut short is redone by the next one; see ``capture``)."""
        with self._live_lock:
            self._stopped = True
            for process in self._live:
                _kill(process)

    def _executable(self) -> str:
        if self._exe is None:
            found = shutil.which("git")
            if found is None:
                raise CheckpointError("git is not installed (not found on PATH)")
            self._exe = found
        return self._exe

    def _env(self) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
        env.update(
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_INDEX_FILE=str(self.index_file),
            GIT_TERMINAL_PROMPT="0",
            LC_ALL="C",
            LANGUAGE="C",
        )
        return env

    def run(
        self,
        *args: str,
        stdin: bytes | None = None,
        work_tree: Path | None = None,
        ok: tuple[int, ...] = (0,),
    ) -> bytes:
        """The command's standard output; a failure (an exit status not in ``ok``), a timeout
        or no git raise CheckpointError."""
        command = [self._executable(), f"--git-dir={self.git_dir}"]
        if args[0] != "init":
            command.append(f"--work-tree={work_tree or self.work_tree}")
        for setting in _CONFIG:
            command += ["-c", setting]
        command += args
        try:
            process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self._env(),
                cwd=work_tree or (self.work_tree if args[0] != "init" else self.git_dir),
                # Its own process group: stopping it stops whatever it started too.
                start_new_session=True,
            )
        except OSError as exc:
            raise CheckpointError(f"git could not be run: {exc.strerror or exc}") from exc
        # Background work: the person's terminal and the agent come first.
        with contextlib.suppress(AttributeError, OSError):
            os.setpriority(os.PRIO_PROCESS, process.pid, _NICENESS)
        with self._live_lock:
            self._live.add(process)
            if self._stopped:
                _kill(process)
        try:
            stdout, stderr = process.communicate(stdin, timeout=self.timeout)
        except subprocess.TimeoutExpired as exc:
            _kill(process)
            process.communicate()
            raise CheckpointTimeout(
                f"git {args[0]} took longer than {self.timeout:g} s and was stopped"
            ) from exc
        finally:
            with self._live_lock:
                self._live.discard(process)
        done = subprocess.CompletedProcess(command, process.returncode, stdout, stderr)
        if done.returncode == -signal.SIGKILL:
            raise CheckpointError(f"git {args[0]} was stopped")
        if done.returncode not in ok:
            detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
            last = detail[-1] if detail else f"exit status {done.returncode}"
            raise CheckpointError(f"git {args[0]} failed: {last}")
        return done.stdout

    def init(self) -> None:
        # No template: nothing of the user's init.templateDir (hooks, excludes) is copied in.
        self.git_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.run("init", "--quiet", "--bare", "--template=")
        # The highest-precedence attributes: the project's .gitattributes may ask for line-ending
        # conversion or filters, and a checkpoint must give back the bytes it took.
        info = self.git_dir / "info"
        info.mkdir(exist_ok=True)
        (info / "attributes").write_text(
            "* -text -eol -filter -ident -working-tree-encoding\n", encoding="ascii"
        )

    def write_commit(self, tree: str, message: str) -> str:
        """A parentless commit of ``tree``, written as a loose object as ``git commit-tree``
        would write it (the shadow repository uses SHA-1: it is made without config)."""
        ident = f"picode <picode@localhost> {int(time.time())} +0000"
        body = f"tree {tree}\nauthor {ident}\ncommitter {ident}\n\n{message}".encode()
        data = b"commit %d\0" % len(body) + body
        sha = hashlib.sha1(data, usedforsecurity=False).hexdigest()
        folder = self.git_dir / "objects" / sha[:2]
        target = folder / sha[2:]
        if not target.exists():
            folder.mkdir(exist_ok=True)
            temp = folder / f"tmp_obj_{secrets.token_hex(6)}"
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
            try:
                os.write(fd, zlib.compress(data, 1))
            finally:
                os.close(fd)
            os.replace(temp, target)
        return sha

    def cat_blobs(self, shas: Sequence[str]) -> dict[str, bytes]:
        """The contents of the blobs ``shas``, read by one ``git cat-file --batch``."""
        if not shas:
            return {}
        unique = list(dict.fromkeys(shas))
        out = self.run("cat-file", "--batch", stdin="".join(f"{s}\n" for s in unique).encode())
        blobs: dict[str, bytes] = {}
        pos = 0
        for sha in unique:
            end = out.index(b"\n", pos)
            header = out[pos:end].split()
            if len(header) != 3 or header[0].decode() != sha:
                raise CheckpointError(f"the checkpoint's copy of an object is missing ({sha})")
            size = int(header[2])
            blobs[sha] = out[end + 1 : end + 1 + size]
            pos = end + 1 + size + 1
        return blobs


#: How much lower than picode's own the git processes of checkpoints run.
_NICENESS = 10


def _kill(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL to the process's group (git and anything it started), once it exists."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signal.SIGKILL)
        else:  # no process groups (Windows): git itself
            process.kill()
