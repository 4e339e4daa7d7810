"""Where the indexes of SDK modules run in slices are kept (``picode.ai.sliced_module``).

The launcher says where (this layer knows no paths); importing this costs nothing before
the first frame. None: every module runs as shipped."""

from __future__ import annotations

from pathlib import Path

folder: Path | None = None


def set_folder(path: Path | None) -> None:
    global folder
    folder = path
