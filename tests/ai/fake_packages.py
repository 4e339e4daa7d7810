"""A fake package tree on ``sys.path`` behind a meta-path finder under test, undone after."""

from __future__ import annotations

import builtins
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def fake_packages(
    folder: Path, root: str, files: dict[str, str], finder: Any, log_name: str
) -> Iterator[list[str]]:
    """Writes ``files`` under ``folder/root``, puts ``finder`` first on ``sys.meta_path``
    and yields the list the fake modules append to as ``builtins.<log_name>``; afterwards
    the finder, the path and every ``root`` module are gone."""
    for name, text in files.items():
        path = folder / root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    sys.path.insert(0, str(folder))
    sys.meta_path.insert(0, finder)
    log: list[str] = []
    setattr(builtins, log_name, log)
    try:
        yield log
    finally:
        sys.meta_path.remove(finder)
        sys.path.remove(str(folder))
        for name in [m for m in sys.modules if m == root or m.startswith(root + ".")]:
            del sys.modules[name]
        delattr(builtins, log_name)
