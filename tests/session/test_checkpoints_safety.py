"""Checkpoints (issue 30), what must never happen: a torn file after kill -9 during a restore,
a path outside the project touched, a missing or stuck git blocking the agent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from picode.session.checkpoints import CheckpointError, CheckpointStore, PathChange
from tests.session.checkpoint_helpers import Project, needs_git, tree_bytes
from tests.support import poll_until

pytestmark = needs_git

FILES = 1500


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


SIZE = 16_384
#: Polled this often, the kill lands while the restore is still under way.
CATCH_S = 0.0005


def content(n: int, version: str) -> bytes:
    line = f"{version} file {n:05d} ".encode()
    return (line * (SIZE // len(line) + 1))[:SIZE]


CHILD = """
import sys
from pathlib import Path
from picode.session.checkpoints import CheckpointStore
store = CheckpointStore(Path(sys.argv[1]), Path(sys.argv[2]))
plan = store.plan_restore(sys.argv[3])
print(len(plan.changes), flush=True)
store.restore(plan)
print("done", flush=True)
"""


def temps_in(folder: Path) -> list[Path]:
    return list(folder.rglob(".picode-restore-*"))


@pytest.mark.parametrize("moment", ["while writing the new copies", "once files changed"])
def test_kill_9_during_a_restore_leaves_each_file_old_or_new(tmp_path: Path, moment: str) -> None:
    project = Project(tmp_path)
    for n in range(FILES):
        (project.root / f"d{n % 10}").mkdir(exist_ok=True)
        (project.root / f"d{n % 10}" / f"f{n:05d}.txt").write_bytes(content(n, "old"))
    checkpoint = project.store.snapshot("s1", "before")
    paths = sorted(project.root.rglob("*.txt"))
    for path in paths:
        path.write_bytes(content(int(path.stem[1:]), "new"))
    project.store.snapshot("s1", "after")
    first = paths[0]  # the plan's order is the paths' order: the first renamed

    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(project.root), str(project.store_dir), checkpoint],
        stdout=subprocess.PIPE,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == str(FILES).encode()
        if moment == "once files changed":
            poll_until(
                lambda: first.read_bytes() == content(0, "old"),
                60,
                "the first file restored",
                interval=CATCH_S,
            )
        else:
            poll_until(
                lambda: bool(temps_in(project.root / "d0")),
                60,
                "a temporary copy written",
                interval=CATCH_S,
            )
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL

    old = new = 0
    for path in paths:
        n = int(path.stem[1:])
        data = path.read_bytes()
        assert data in (content(n, "old"), content(n, "new")), f"{path.name} is torn"
        old += data == content(n, "old")
        new += data == content(n, "new")
    assert old + new == FILES
    if moment == "once files changed":
        assert old >= 1
    # The next operation removes what the killed restore left, and can finish the job.
    plan = CheckpointStore(project.root, project.store_dir).plan_restore(checkpoint)
    assert temps_in(project.root) == []
    assert len(plan.changes) == new
    assert project.store.restore(plan).ok
    assert all(p.read_bytes() == content(int(p.stem[1:]), "old") for p in paths)


def test_a_path_outside_the_project_is_refused(project: Project, tmp_path: Path) -> None:
    project.write("a.txt", "one\n")
    before = project.store.snapshot("s1", "before")
    project.write("a.txt", "two\n")
    plan = project.store.plan_restore(before)
    blob = plan.changes[0].blob
    evil = [
        PathChange("../outside.txt", "recreate", 1, 0, mode="100644", blob=blob),
        PathChange(str(tmp_path / "absolute.txt"), "recreate", 1, 0, mode="100644", blob=blob),
        PathChange("sub/../../up.txt", "recreate", 1, 0, mode="100644", blob=blob),
        PathChange(".git/config", "recreate", 1, 0, mode="100644", blob=blob),
    ]
    forged = type(plan)(plan.root, plan.checkpoint, plan.tree, plan.current_tree, tuple(evil))

    report = project.store.restore(forged)

    assert sorted(path for path, _ in report.failed) == sorted(c.path for c in evil)
    assert report.written == []
    assert not (tmp_path / "outside.txt").exists()
    assert not (tmp_path / "absolute.txt").exists()
    assert not (tmp_path / "up.txt").exists()
    assert not (project.root / ".git").exists()


def test_a_folder_swapped_for_a_link_out_of_the_project_is_refused(
    project: Project, tmp_path: Path
) -> None:
    project.write("sub/f.txt", "old\n")
    project.write("sub/gone.txt", "old\n")
    before = project.store.snapshot("s1", "before")
    project.write("sub/f.txt", "new\n")
    (project.root / "sub" / "gone.txt").unlink()
    plan = project.store.plan_restore(before)
    outside = tmp_path / "elsewhere"
    (project.root / "sub").rename(outside)  # the same files, now reached through a link
    os.symlink(outside, project.root / "sub")

    report = project.store.restore(plan)

    assert sorted(path for path, _ in report.failed) == ["sub/f.txt", "sub/gone.txt"]
    assert tree_bytes(outside) == {"f.txt": b"new\n"}


def test_no_git_on_path_is_a_clear_error(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.write("a.txt", "one\n")
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    store = CheckpointStore(project.root, project.store_dir)

    with pytest.raises(CheckpointError, match="git is not installed"):
        store.snapshot("s1", "before")


def test_a_stuck_git_is_stopped_by_the_timeout(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.write("a.txt", "one\n")
    fake_bin = tmp_path / "fake-bin"
    fake_bin.mkdir()
    fake_git = fake_bin / "git"
    fake_git.write_text("#!/bin/sh\nexec sleep 60\n", encoding="utf-8")
    fake_git.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake_bin}{os.pathsep}{os.environ['PATH']}")
    store = CheckpointStore(project.root, project.store_dir, timeout=0.5)

    started = time.monotonic()
    with pytest.raises(CheckpointError, match="longer than"):
        store.snapshot("s1", "before")
    assert time.monotonic() - started < 10


def test_a_failing_git_is_a_checkpoint_error(project: Project) -> None:
    project.write("a.txt", "one\n")
    project.store.snapshot("s1", "before")
    objects = project.store.git_dir / "objects"
    objects.rename(objects.with_name("objects.aside"))
    objects.write_text("not a folder: no object can be written\n", encoding="utf-8")
    project.write("b.txt", "new content\n")

    with pytest.raises(CheckpointError, match=r"git .* failed"):
        project.store.snapshot("s1", "after")


def test_a_killed_git_leaves_no_lock_that_blocks_the_next_snapshot(project: Project) -> None:
    project.write("a.txt", "one\n")
    project.store.snapshot("s1", "before")
    (project.store.git_dir / "picode-index.lock").write_text("", encoding="utf-8")
    project.write("a.txt", "two\n")

    assert project.store.snapshot("s1", "after")


def test_the_shadow_repository_stays_sound(project: Project) -> None:
    project.write("a.txt", "one\n")
    project.write("dir/b.txt", "two\n")
    project.store.snapshot("s1", "first")
    project.store.snapshot("s1", "nothing changed")
    project.write("dir/b.txt", "three\n")
    checkpoint = project.store.snapshot("s1", "one change")
    project.store.hand_edits(checkpoint)

    project.store._git.run("fsck", "--strict", "--no-dangling")
    shown = project.store._git.run("log", "-1", "--format=%an %ae%n%B", checkpoint).decode()
    assert shown.startswith("picode picode@localhost\none change\n")


def test_a_capture_killed_after_updating_the_index_is_not_trusted(project: Project) -> None:
    project.write("a.txt", "one\n")
    first = project.store.snapshot("s1", "first")
    project.write("b.txt", "new\n")
    # What a snapshot killed between update-index and moving HEAD leaves behind.
    project.store._git.run("update-index", "--add", "b.txt")

    second = project.store.snapshot("s1", "second")

    assert project.store.hand_edits(second) == []
    assert project.store.plan_restore(first).deleted == ["b.txt"]


def test_an_unknown_checkpoint_is_a_checkpoint_error(project: Project) -> None:
    project.write("a.txt", "one\n")
    project.store.snapshot("s1", "before")

    with pytest.raises(CheckpointError):
        project.store.plan_restore("0" * 40)
    with pytest.raises(CheckpointError):
        project.store.plan_restore("--output=/tmp/x")
