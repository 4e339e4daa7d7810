"""Checkpoints of the project's files, and restoring them (issue 30; docs/sessions.md,
"Checkpoints").

The session calls this synchronous engine through ``asyncio.to_thread``::

    store = CheckpointStore(root, store_dir)          # max_file_bytes=10 MiB by default
    store.warm()                                      # the index filled, nothing kept
    store.stop()                                      # end what runs, refuse more (closing)
    checkpoint = store.snapshot(session_id, label)    # an id; raises CheckpointError
    plan = store.plan_restore(checkpoint)             # what a restore would do; writes nothing
    store.diff_text(plan, path)                       # one path's unified diff, terminal-safe
    report = store.restore(plan, skip={...})          # written, deleted, skipped, failed
    store.hand_edits(since)                           # paths changed since checkpoint ``since``
    store.forget_session(session_id)                  # its checkpoints go, storage reclaimed
    store.prune(live_sessions)                        # gone sessions' go; storage bounded

How: a shadow git repository outside the project, ``store_dir/<hash of the root>/``, with
its own index file, driven as ``git --git-dir=<it> --work-tree=<root>`` without the user's
or system's config, hooks, global ignore file or ``GIT_*`` variables, each call with a
timeout. A snapshot is ``git status`` against that index, ``update-index`` of the paths it
names, ``write-tree``, and a commit whose message holds the label (``capture.py``: a
10,000-file tree with 10 changes costs about 1.5 times a ``git status`` of the user's own
repository); a ref ``refs/picode/<session>/<time>`` keeps it from gc. The project's
``.gitattributes`` cannot convert line endings or run filters (``git.py``). The user's
``.git`` (folder or file) is never read as a repository nor written: git skips it in the
work tree. A project that is not a git repository works the same.

What a snapshot holds: every file git would not ignore. The project's ``.gitignore`` files
apply, and so do its ``.git/info/exclude`` and, for a folder inside a repository, the
``.gitignore`` files above it (``excludes.py``); the user's global ignore file does not, so a
checkpoint does not depend on per-user config. Left out: files over ``max_file_bytes`` and
nested git repositories. Symbolic links are stored as links, never followed.

What a restore touches: only paths that differ between the checkpoint and a snapshot taken
while planning. A restore never overwrites or deletes a file that is not in checkpoints: an
ignored or too-large file, or one in a nested repository, whether it is "deleted since" or
"created since" (a file ignored or too large when the checkpoint was taken is not treated as
created since, even if the rules changed). Each file is checked to still hold what the plan
saw, then written atomically (``writer.py``); paths outside the root are refused.

Storage: each checkpoint adds only the files that changed since the one before (git stores a
content once). ``prune`` keeps each session's newest ``max_checkpoints`` (200) and the whole
store under ``max_store_bytes`` (2 GiB) by dropping the oldest checkpoints of all sessions;
gc runs only when checkpoints were dropped or loose objects pile up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from picode.session._faces import lazy_names

if TYPE_CHECKING:
    from picode.session.checkpoints.git import CheckpointError, CheckpointTimeout
    from picode.session.checkpoints.plan import KeptPath, PathChange, RestorePlan, RestoreReport
    from picode.session.checkpoints.store import CheckpointStore

_WHERE = {
    "CheckpointError": "git",
    "CheckpointTimeout": "git",
    "CheckpointStore": "store",
    "KeptPath": "plan",
    "PathChange": "plan",
    "RestorePlan": "plan",
    "RestoreReport": "plan",
}

__all__ = [
    "CheckpointError",
    "CheckpointStore",
    "CheckpointTimeout",
    "KeptPath",
    "PathChange",
    "RestorePlan",
    "RestoreReport",
]

__getattr__ = lazy_names(__name__, _WHERE)
