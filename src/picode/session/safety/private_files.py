"""Files only the user may read: written atomically with mode 0600 in a 0700 folder."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700


def ensure_private_dirs(*folders: Path) -> None:
    """Each folder exists, mode 0700: created so, or tightened when it lets others in.

    Done quietly: the folders are picode's own (config, data, sessions, cache), and a
    folder that cannot be made or changed is reported by whatever writes to it later."""
    for folder in folders:
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
            if os.name == "posix" and stat.S_IMODE(folder.stat().st_mode) & 0o077:
                os.chmod(folder, PRIVATE_DIR_MODE)
        except OSError:
            continue


def write_private_json(path: Path, data: Any) -> None:
    """Replace ``path`` with ``data`` as JSON; a crash leaves the old file or the new one.

    Raises ``OSError`` when the folder or the file cannot be written."""
    directory = path.parent
    directory.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            # mkstemp creates the file 0600 already; chmod covers odd umask/ACL setups.
            if os.name == "posix":
                os.fchmod(handle.fileno(), PRIVATE_FILE_MODE)
            json.dump(data, handle, indent=2, sort_keys=True)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
