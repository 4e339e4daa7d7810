"""Checkpoints of the working tree (issue 30): snapshot, plan, restore, hand edits, the
ignore and size policy, a git repository and a plain folder, and storage (real git)."""

from __future__ import annotations

import os
import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from picode.session.checkpoints import CheckpointError, CheckpointStore
from tests.session.checkpoint_helpers import Project, needs_git, tree_bytes

pytestmark = needs_git


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def three_changes(project: Project) -> str:
    """One file edited in place, one by ``sed -i``, one removed, one created by a shell;
    the checkpoint taken before them."""
    project.write("src/app.py", "def main():\n    return 1\n")
    project.write("src/util.py", "VALUE = 'old'\nOTHER = 2\n")
    project.write("docs/notes.md", "keep me\n")
    before = project.store.snapshot("s1", "before the message")
    project.write("src/app.py", "def main():\n    return 2\n\n\nmain()\n")
    project.sh("sed -i 's/old/new/' src/util.py && rm docs/notes.md && echo hi > made.txt")
    return before


def test_plan_lists_each_change_and_writes_nothing(project: Project) -> None:
    before = three_changes(project)
    project.store.snapshot("s1", "after the tools")
    on_disk = tree_bytes(project.root)

    plan = project.store.plan_restore(before)

    assert plan.modified == ["src/app.py", "src/util.py"]
    assert plan.recreated == ["docs/notes.md"]
    assert plan.deleted == ["made.txt"]
    counts = {change.path: (change.added, change.removed) for change in plan.changes}
    assert counts["src/app.py"] == (1, 4)
    assert counts["docs/notes.md"] == (1, 0)
    assert counts["made.txt"] == (0, 1)
    assert (plan.lines_added, plan.lines_removed) == (3, 6)
    assert tree_bytes(project.root) == on_disk
    diff = project.store.diff_text(plan, "src/util.py")
    assert "-VALUE = 'new'" in diff
    assert "+VALUE = 'old'" in diff


def test_restore_puts_everything_back_and_deletes_the_new_file(project: Project) -> None:
    before = three_changes(project)
    original = {
        "src/app.py": "def main():\n    return 1\n",
        "src/util.py": "VALUE = 'old'\nOTHER = 2\n",
        "docs/notes.md": "keep me\n",
    }

    report = project.store.restore(project.store.plan_restore(before))

    assert report.ok
    assert sorted(report.written) == ["docs/notes.md", "src/app.py", "src/util.py"]
    assert report.deleted == ["made.txt"]
    assert {path: project.read(path) for path in original} == original
    assert not (project.root / "made.txt").exists()
    assert project.store.plan_restore(before).empty


def test_a_new_folder_of_files_is_removed_and_a_removed_one_comes_back(project: Project) -> None:
    project.write("old/deep/a.py", "a\n")
    project.write("old/b.py", "b\n")
    before = project.store.snapshot("s1", "before")
    project.sh("rm -r old && mkdir -p new/deep && echo x > new/deep/x.py && echo y > new/y.py")

    plan = project.store.plan_restore(before)
    project.store.restore(plan)

    assert plan.deleted == ["new/deep/x.py", "new/y.py"]
    assert plan.recreated == ["old/b.py", "old/deep/a.py"]
    assert tree_bytes(project.root) == {"old/deep/a.py": b"a\n", "old/b.py": b"b\n"}


def test_skipped_paths_are_left_as_they_are(project: Project) -> None:
    before = three_changes(project)

    report = project.store.restore(
        project.store.plan_restore(before), skip={"src/app.py", "made.txt"}
    )

    assert sorted(report.skipped) == ["made.txt", "src/app.py"]
    assert "main()" in project.read("src/app.py")
    assert (project.root / "made.txt").exists()
    assert project.read("src/util.py").startswith("VALUE = 'old'")


def test_a_hand_edit_after_the_agents_step_is_reported(project: Project) -> None:
    three_changes(project)
    after_agent = project.store.snapshot("s1", "after the agent's step")
    assert project.store.hand_edits(after_agent) == []

    project.write("src/app.py", "edited by hand\n")
    project.sh("touch src/util.py")  # a new time but the same content is no edit

    assert project.store.hand_edits(after_agent) == ["src/app.py"]


def test_a_file_changed_after_planning_is_not_overwritten(project: Project) -> None:
    before = three_changes(project)
    plan = project.store.plan_restore(before)
    project.write("src/app.py", "typed while the plan was on screen\n")

    report = project.store.restore(plan)

    assert [path for path, _ in report.failed] == ["src/app.py"]
    assert project.read("src/app.py") == "typed while the plan was on screen\n"
    assert project.read("src/util.py").startswith("VALUE = 'old'")


def test_ignored_files_are_never_restored_nor_deleted(project: Project) -> None:
    project.write(".gitignore", "*.log\nbuild/\n")
    project.write("run.log", "first run\n")
    project.write("build/out.bin", "old build\n")
    project.write("main.py", "print(1)\n")
    before = project.store.snapshot("s1", "before")
    project.write("run.log", "second run\n")
    project.write("build/out.bin", "new build\n")
    project.write("build/extra.o", "object\n")
    project.write("main.py", "print(2)\n")

    plan = project.store.plan_restore(before)
    project.store.restore(plan)

    assert [change.path for change in plan.changes] == ["main.py"]
    assert project.read("run.log") == "second run\n"
    assert project.read("build/out.bin") == "new build\n"
    assert project.read("build/extra.o") == "object\n"
    assert project.read("main.py") == "print(1)\n"


def test_the_repositorys_own_exclude_file_is_respected(project: Project) -> None:
    project.git("init", "-q")
    project.write(".git/info/exclude", "local-notes.txt\n")
    project.write("local-notes.txt", "mine\n")
    project.write("a.txt", "one\n")
    before = project.store.snapshot("s1", "before")
    project.write("local-notes.txt", "still mine\n")

    plan = project.store.plan_restore(before)

    assert plan.changes == ()
    assert project.read("local-notes.txt") == "still mine\n"


def test_ignore_rules_from_the_folders_above_apply_in_a_subfolder(tmp_path: Path) -> None:
    outer = Project(tmp_path)
    outer.git("init", "-q")
    outer.write(".gitignore", "*.log\n/project-sub/generated/\n/elsewhere/\n")
    sub = outer.root / "project-sub"
    outer.write("project-sub/app.py", "print(1)\n")
    outer.write("project-sub/run.log", "log\n")
    outer.write("project-sub/generated/out.py", "generated\n")
    store = CheckpointStore(sub, tmp_path / "sub-store")
    before = store.snapshot("s1", "before")
    outer.write("project-sub/run.log", "log 2\n")
    outer.write("project-sub/generated/out.py", "generated 2\n")
    outer.write("project-sub/app.py", "print(2)\n")

    plan = store.plan_restore(before)

    assert [change.path for change in plan.changes] == ["app.py"]


def test_snapshots_from_several_threads_take_turns(project: Project) -> None:
    project.write("a.txt", "one\n")
    with ThreadPoolExecutor(4) as pool:
        ids = list(pool.map(lambda n: project.store.snapshot(f"s{n}", "x"), range(8)))

    assert len(set(ids)) == 8
    assert all(project.store.plan_restore(checkpoint).empty for checkpoint in ids)


def test_a_file_ignored_when_the_checkpoint_was_taken_is_not_deleted(project: Project) -> None:
    project.write(".gitignore", "secret.env\n")
    project.write("secret.env", "TOKEN=1\n")
    before = project.store.snapshot("s1", "before")
    project.write(".gitignore", "# nothing ignored now\n")
    project.store.snapshot("s1", "the agent emptied .gitignore")

    plan = project.store.plan_restore(before)
    report = project.store.restore(plan)

    assert "secret.env" not in plan.deleted
    assert [kept.path for kept in plan.kept] == ["secret.env"]
    assert project.read("secret.env") == "TOKEN=1\n"
    assert project.read(".gitignore") == "secret.env\n"
    assert report.ok


def test_files_over_the_size_limit_are_left_alone(tmp_path: Path) -> None:
    project = Project(tmp_path, max_file_bytes=1000)
    project.write("big.dat", "a" * 2000)
    project.write("grows.txt", "small\n")
    before = project.store.snapshot("s1", "before")
    project.write("big.dat", "b" * 3000)
    project.write("grows.txt", "c" * 5000)
    project.write("new-big.dat", "d" * 4000)

    plan = project.store.plan_restore(before)
    report = project.store.restore(plan)

    assert plan.changes == ()
    assert [kept.path for kept in plan.kept] == ["grows.txt"]
    assert report.written == report.deleted == []
    assert project.read("big.dat") == "b" * 3000
    assert project.read("grows.txt") == "c" * 5000
    assert project.read("new-big.dat") == "d" * 4000
    # Nothing that large was stored: the objects are a few small blobs and trees.
    objects = project.store.git_dir / "objects"
    assert sum(p.stat().st_size for p in objects.rglob("*") if p.is_file()) < 2000


def test_a_file_too_large_at_the_checkpoint_is_not_deleted_once_it_shrinks(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path, max_file_bytes=1000)
    project.write("data.csv", "x" * 5000)
    before = project.store.snapshot("s1", "before")
    project.write("data.csv", "small now\n")

    plan = project.store.plan_restore(before)
    project.store.restore(plan)

    assert plan.deleted == []
    assert project.read("data.csv") == "small now\n"


def test_the_projects_attributes_do_not_change_the_bytes(project: Project) -> None:
    project.write(".gitattributes", "* text eol=crlf\n*.txt filter=lfs\n")
    (project.root / "dos.txt").write_bytes(b"one\r\ntwo\r\n")
    (project.root / "unix.py").write_bytes(b"one\ntwo\n")
    before = project.store.snapshot("s1", "before")
    project.sh("echo changed > dos.txt && echo changed > unix.py")

    project.store.restore(project.store.plan_restore(before))

    assert (project.root / "dos.txt").read_bytes() == b"one\r\ntwo\r\n"
    assert (project.root / "unix.py").read_bytes() == b"one\ntwo\n"


def test_links_are_kept_as_links_and_never_followed(project: Project, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("outside\n", encoding="utf-8")
    os.symlink(outside, project.root / "link")
    before = project.store.snapshot("s1", "before")
    outside.write_text("changed outside\n", encoding="utf-8")
    (project.root / "link").unlink()

    plan = project.store.plan_restore(before)
    project.store.restore(plan)

    assert plan.recreated == ["link"]
    assert os.readlink(project.root / "link") == str(outside)
    assert outside.read_text(encoding="utf-8") == "changed outside\n"


def test_the_execute_bit_comes_back_and_other_bits_stay(project: Project) -> None:
    script = project.write("run.sh", "echo 1\n")
    script.chmod(0o750)
    before = project.store.snapshot("s1", "before")
    project.sh("echo 'echo 2' > run.sh && chmod 640 run.sh")

    project.store.restore(project.store.plan_restore(before))

    assert project.read("run.sh") == "echo 1\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o750


def test_a_folder_where_a_file_was_and_a_file_where_a_folder_was(project: Project) -> None:
    project.write("thing", "a file\n")
    project.write("place/inner.txt", "in a folder\n")
    before = project.store.snapshot("s1", "before")
    project.sh("rm thing && mkdir thing && echo x > thing/new && rm -r place && echo f > place")

    report = project.store.restore(project.store.plan_restore(before))

    assert report.ok, report.failed
    assert project.read("thing") == "a file\n"
    assert project.read("place/inner.txt") == "in a folder\n"


def test_a_nested_repository_is_left_out_and_does_not_fail_the_snapshot(
    project: Project,
) -> None:
    project.write("vendor/lib/code.py", "x = 1\n")
    project.git("init", "-q", "vendor/lib")  # no commit checked out: git add would fail
    project.write("main.py", "print(1)\n")
    before = project.store.snapshot("s1", "before")
    project.write("vendor/lib/code.py", "x = 2\n")

    plan = project.store.plan_restore(before)

    assert plan.changes == ()
    assert project.store.hand_edits(before) == []


@pytest.mark.parametrize("kind", ["plain folder", "git repository"])
def test_a_plain_folder_and_a_repository_both_work_and_the_users_git_is_untouched(
    project: Project, kind: str
) -> None:
    project.write("a.txt", "one\n")
    project.write(".gitignore", "*.tmp\n")
    if kind == "git repository":
        project.git("init", "-q")
        project.git("add", "-A")
        project.git("commit", "-qm", "first")
        project.write("a.txt", "one, staged\n")
        project.git("add", "a.txt")
    user_git = tree_bytes(project.root / ".git") if kind == "git repository" else {}
    status = project.git("status", "--porcelain") if kind == "git repository" else ""

    before = project.store.snapshot("s1", "before")
    project.write("a.txt", "two\n")
    project.write("b.txt", "new\n")
    plan = project.store.plan_restore(before)
    report = project.store.restore(plan)

    assert plan.modified == ["a.txt"]
    assert plan.deleted == ["b.txt"]
    assert report.ok
    assert not any(".git/" in path for path in project.store.hand_edits(before))
    if kind == "git repository":
        assert tree_bytes(project.root / ".git") == user_git
        assert project.git("status", "--porcelain") == status
    else:
        assert not (project.root / ".git").exists()


def test_the_store_is_outside_the_project(project: Project) -> None:
    project.write("a.txt", "one\n")
    project.store.snapshot("s1", "before")

    assert tree_bytes(project.root) == {"a.txt": b"one\n"}
    assert project.store.git_dir.is_relative_to(project.store_dir)


def test_a_store_inside_the_project_is_not_taken_into_itself(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.txt").write_text("one\n", encoding="utf-8")
    store = CheckpointStore(root, root / ".picode-home" / "checkpoints")
    before = store.snapshot("s1", "before")
    (root / "a.txt").write_text("two\n", encoding="utf-8")
    store.snapshot("s1", "after")

    plan = store.plan_restore(before)

    assert [change.path for change in plan.changes] == ["a.txt"]
    assert store.hand_edits(before) == ["a.txt"]


def test_a_forgotten_session_is_gone_and_its_storage_reclaimed(project: Project) -> None:
    checkpoints = {}
    for session in ("s1", "s2"):
        project.write(f"{session}.bin", os.urandom(200_000).hex())
        checkpoints[session] = project.store.snapshot(session, "with its own data")
        (project.root / f"{session}.bin").unlink()
    project.store.snapshot("s2", "the data removed")
    full = store_size(project)

    project.store.forget_session("s1")

    with pytest.raises(CheckpointError):
        project.store.plan_restore(checkpoints["s1"])
    assert store_size(project) < full - 150_000
    assert project.store.plan_restore(checkpoints["s2"]).recreated == ["s2.bin"]


def test_prune_drops_gone_sessions_and_keeps_the_newest_of_each(tmp_path: Path) -> None:
    project = Project(tmp_path, max_checkpoints=2)
    ids = []
    for n in range(4):
        project.write("n.txt", f"{n}\n")
        ids.append(project.store.snapshot("live", f"step {n}"))
    project.write("gone.bin", os.urandom(200_000).hex())
    gone = project.store.snapshot("gone", "a session since deleted")
    (project.root / "gone.bin").unlink()
    project.store.snapshot("live", "after")
    full = store_size(project)

    project.store.prune(["live"])

    for checkpoint in (gone, *ids[:3]):
        with pytest.raises(CheckpointError):
            project.store.plan_restore(checkpoint)
    assert project.store.plan_restore(ids[3]).modified == []
    assert store_size(project) < full - 150_000


def test_prune_keeps_the_store_under_its_size_bound(tmp_path: Path) -> None:
    project = Project(tmp_path, max_store_bytes=600_000)
    ids = []
    for n in range(6):
        project.write("data.bin", os.urandom(150_000).hex())
        ids.append(project.store.snapshot("s1", f"step {n}"))

    project.store.prune(["s1"])

    assert store_size(project) <= 600_000
    with pytest.raises(CheckpointError):
        project.store.plan_restore(ids[0])
    assert project.store.plan_restore(ids[-1]).empty


def store_size(project: Project) -> int:
    return sum(p.stat().st_size for p in project.store.git_dir.rglob("*") if p.is_file())
