"""Taking the project's files into the shadow index, as cheaply as git allows.

One ``git status`` finds what changed: it looks at each tracked file's stat data against the
index (so only changed files are read) and at each folder's against the untracked cache (so
only changed folders are listed), and saves what it refreshed. Comparing HEAD with the index
is cheap because HEAD is kept at a commit of the index's own tree after every capture. Then
only the changed paths go through ``update-index`` and ``write-tree`` (whose cache rewrites
only the trees of changed folders), and neither runs when nothing changed. The commit object
is written here (``ShadowGit.write_commit``): a git process costs more to start than the
object costs to make. ``git add --all`` would list every folder again.

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


def _changes(git: ShadowGit, excluded: Excluded) -> tuple[list[str], list[str], bool]:
    """(paths to bring into the index, tracked paths now too large, whether the index holds
    HEAD's tree), from ``git status``."""
    output = git.run(
        "status", "--porcelain=v1", "-z", "--untracked-files=normal", "--no-renames",
        "--ignore-submodules=all",
    )  # fmt: skip
    changed: list[str] = []
    untracked: list[str] = []
    folders: list[str] = []
    index_is_head = True
    for item in output.split(b"\0"):
        if len(item) < 4:
            continue
        code, path = item[:2], os.fsdecode(item[3:])
        index_is_head = index_is_head and code[:1] in b" ?"
        if code == b"??":
            (folders if path.endswith("/") else untracked).append(path)
        elif code[1:] != b" ":
            changed.append(path)  # the work tree differs from the index: modified, deleted
    # A tracked file that is a folder now: git lists neither, until the file leaves the index.
    reborn = [path for path in changed if _is_folder(git.work_tree / path)]
    if reborn:
        index_is_head = False
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
    return [p for p in changed if p not in set(grown)] + new, grown, index_is_head


def capture(git: ShadowGit, excluded: Excluded, message: str) -> tuple[str, str]:
    """The project's files now as a commit of the shadow repository: (commit, tree). The
    message gets a ``too-large:`` line listing the files left out for their size."""
    excluded.recheck()
    excluded.write()
    paths, grown, index_is_head = _changes(git, excluded)
    excluded.write()
    if grown:
        git.run("update-index", "-z", "--force-remove", "--stdin", stdin=_nul(grown))
    if paths:
        git.run("update-index", "-z", "--add", "--remove", "--stdin", stdin=_nul(paths))
    tree = _head_tree(git.git_dir) if index_is_head and not paths and not grown else None
    if tree is None:
        tree = git.run("write-tree").decode().strip()
    message += f"too-large: {json.dumps(excluded.large_paths())}\n"
    commit = git.write_commit(tree, message)
    _replace(git.git_dir / "HEAD", f"{commit}\n")
    _replace(git.git_dir / "picode-head", f"{commit} {tree}\n")
    return commit, tree


def _head_tree(git_dir: Path) -> str | None:
    """The tree of HEAD, as the last capture recorded it (None if HEAD moved since)."""
    try:
        commit, tree = (git_dir / "picode-head").read_text("ascii").split()
        head = (git_dir / "HEAD").read_text("ascii").strip()
    except (OSError, ValueError):
        return None
    return tree if head == commit else None


def _replace(path: Path, text: str) -> None:
    temp = path.with_name(path.name + ".picode-tmp")
    temp.write_text(text, encoding="ascii")
    os.replace(temp, path)


def _is_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _nul(paths: list[str]) -> bytes:
    return b"".join(os.fsencode(path) + b"\0" for path in paths)
