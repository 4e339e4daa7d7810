from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from picode.tools import _files
from picode.tools.write import WriteTool
from tests.tools.helpers import run, run_error


def current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_creates_file_and_parent_folders(tmp_path: Path) -> None:
    result = run(WriteTool(tmp_path), path="deep/er/new.py", content="print('hé')\nx = 1\n")
    target = tmp_path / "deep/er/new.py"
    assert target.read_text(encoding="utf-8") == "print('hé')\nx = 1\n"
    size = len("print('hé')\nx = 1\n".encode())
    assert result.details == {"path": "deep/er/new.py", "bytes": size, "lines": 2, "created": True}
    assert f"{size} bytes" in result.text_content
    assert "2 lines" in result.text_content
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~current_umask()


def test_overwrite_keeps_the_mode_and_leaves_no_temp_files(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("old\n")
    script.chmod(0o750)
    result = run(WriteTool(tmp_path), path="run.sh", content="#!/bin/sh\necho new")
    assert script.read_text() == "#!/bin/sh\necho new"
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert result.details["created"] is False
    assert result.details["lines"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.sh"]


def test_failed_replace_leaves_the_original_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "keep.txt"
    target.write_text("precious\n")

    def failing_replace(source: str, destination: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_files.os, "replace", failing_replace)
    message = run_error(WriteTool(tmp_path), path="keep.txt", content="new")
    assert "No space left on device" in message
    assert target.read_text() == "precious\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_writing_through_a_symlink_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("a")
    (tmp_path / "link.txt").symlink_to(real)
    run(WriteTool(tmp_path), path="link.txt", content="b")
    assert (tmp_path / "link.txt").is_symlink()
    assert real.read_text() == "b"


def test_directory_target_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    assert "directory" in run_error(WriteTool(tmp_path), path="pkg", content="x")


def test_parent_that_is_a_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    message = run_error(WriteTool(tmp_path), path="file/child.txt", content="x")
    assert "part of its path is a file" in message


def test_empty_content_writes_an_empty_file(tmp_path: Path) -> None:
    result = run(WriteTool(tmp_path), path="empty", content="")
    assert (tmp_path / "empty").read_bytes() == b""
    assert result.details["lines"] == 0
    assert result.details["bytes"] == 0
