"""Taking the project's files into the shadow index, as cheaply as git allows.

One ``git status`` finds what changed: it looks at each tracked file's stat data against the
index (so only changed files are read) and at each folder's against the untracked cache (so
only changed folders are listed), and saves what it refreshed. Comparing HEAD with the index
is cheap because HEAD is kept at a commit of the index's own tree after every capture. Then
only the changed paths go through ``update-index`` and ``write-tree`` (whose cache rewrites
only the trees of changed folders). A snapshot of an unchanged 10,000-file tree costs those
stats and four short git processes; ``git add --all`` would list every folder again.

Large files are found before anything reads them: an untracked file over the limit goes to the
exclude list at once, a tracked one that grew is dropped from the index.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from picode.session.checkpoints.excludes import Excluded
from picode.session.checkpoints.git import ShadowGit


def _changes(git: ShadowGit, excluded: Excluded) -> tuple[list[str], list[str]]:
    """(paths to bring into the index, tracked paths now too large), from ``git status``."""
    output = git.run(
        "status", "--porcelain=v1", "-z", "--untracked-files=normal", "--no-renames",
        "--ignore-submodules=all",
    )  # fmt: skip
    changed: list[str] = []
    untracked: list[str] = []
    folders: list[str] = []
    for item in output.split(b"\0"):
        if len(item) < 4:
            continue
        code, path = item[:2], os.fsdecode(item[3:])
        if code == b"??":
            (folders if path.endswith("/") else untracked).append(path)
        elif code[1:] != b" ":
            changed.append(path)  # the work tree differs from the index: modified, deleted
    # A tracked file that is a folder now: git lists neither, until the file leaves the index.
    reborn = [path for path in changed if _is_folder(git.work_tree / path)]
    if reborn:
        changed = [path for path in changed if path not in set(reborn)]
        git.run("update-index", "-z", "--force-remove", "--stdin", stdin=_nul(reborn))
        folders += [path + "/" for path in reborn]
    if folders:
        # A new folder is listed whole; its files, or a nested repository, are listed here.
        listing = git.run(
            "ls-files", "-z", "--others", "--exclude-standard", "--",
            *(f":(literal){folder}" for folder in folders),
        )  # fmt: skip
        untracked += [os.fsdecode(item) for item in listing.split(b"\0") if item]
    excluded.consider(untracked)
    grown = [path for path in changed if excluded.too_large(path)]
    if grown:
        excluded.add_large(grown)
    new = [path for path in untracked if not path.endswith("/") and not excluded.is_large(path)]
    return [p for p in changed if p not in set(grown)] + new, grown


def capture(git: ShadowGit, excluded: Excluded, message: str) -> tuple[str, str]:
    """The project's files now as a commit of the shadow repository: (commit, tree). The
    message gets a ``too-large:`` line listing the files left out for their size."""
    excluded.recheck()
    excluded.write()
    paths, grown = _changes(git, excluded)
    excluded.write()
    if grown:
        git.run("update-index", "-z", "--force-remove", "--stdin", stdin=_nul(grown))
    if paths:
        git.run("update-index", "-z", "--add", "--remove", "--stdin", stdin=_nul(paths))
    tree = git.run("write-tree").decode().strip()
    message += f"too-large: {json.dumps(excluded.large_paths())}\n"
    commit = git.run("commit-tree", tree, stdin=message.encode()).decode().strip()
    head = git.git_dir / "HEAD"
    temp = head.with_name("HEAD.picode-tmp")
    temp.write_text(commit + "\n", encoding="ascii")
    os.replace(temp, head)
    return commit, tree


def _is_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _nul(paths: list[str]) -> bytes:
    return b"".join(os.fsencode(path) + b"\0" for path in paths)
