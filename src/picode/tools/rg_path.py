"""Where the ripgrep binary is: on PATH, or beside Python (the ``ripgrep`` wheel puts it there)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def find_rg() -> str | None:
    found = shutil.which("rg")
    if found:
        return found
    for name in ("rg", "rg.exe"):
        beside_python = Path(sys.executable).parent / name
        if beside_python.is_file() and os.access(beside_python, os.X_OK):
            return str(beside_python)
    return None
