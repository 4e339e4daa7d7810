"""read, write and edit reach file contents through the FileAccess they are given."""

from __future__ import annotations

import io
from pathlib import Path
from typing import BinaryIO

from picode.tools import coding_tools
from picode.tools.edit import EditTool
from picode.tools.read import ReadTool
from picode.tools.write import WriteTool
from tests.tools.helpers import run, run_error


class FakeBufferFiles:
    """Stands in for an editor's files: unsaved buffers that differ from the disk."""

    def __init__(self, buffers: dict[Path, str]) -> None:
        self.buffers = buffers
        self.reads: list[Path] = []
        self.writes: list[Path] = []

    async def open_read(self, path: Path) -> BinaryIO:
        self.reads.append(path)
        if path not in self.buffers:
            raise FileNotFoundError(2, "No such file or directory")
        return io.BytesIO(self.buffers[path].encode("utf-8"))

    async def write(self, path: Path, data: bytes) -> bool:
        self.writes.append(path)
        created = path not in self.buffers
        self.buffers[path] = data.decode("utf-8")
        return created


def test_read_returns_the_buffer_not_the_disk(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_text("on disk\n")
    files = FakeBufferFiles({target: "unsaved\nchange\n"})
    result = run(ReadTool(tmp_path, files), path="a.py", offset=2)
    assert result.text_content == "change"
    assert files.reads == [target]


def test_edit_changes_the_buffer_and_leaves_the_disk(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_text("x = 1\n")
    files = FakeBufferFiles({target: "x = 2\n"})
    result = run(EditTool(tmp_path, files), path="a.py", old_text="x = 2", new_text="x = 3")
    assert files.buffers[target] == "x = 3\n"
    assert target.read_text() == "x = 1\n"
    assert "-x = 2\n+x = 3" in result.details["diff"]


def test_write_goes_to_the_access_and_reports_new_files(tmp_path: Path) -> None:
    files = FakeBufferFiles({})
    result = run(WriteTool(tmp_path, files), path="new.txt", content="hello\n")
    assert files.buffers == {tmp_path / "new.txt": "hello\n"}
    assert result.details["created"] is True
    assert not (tmp_path / "new.txt").exists()


def test_an_unreadable_buffer_is_a_tool_error(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x\n")
    message = run_error(ReadTool(tmp_path, FakeBufferFiles({})), path="a.py")
    assert message == "Cannot read a.py: No such file or directory."


def test_coding_tools_hand_the_access_to_the_file_tools(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_text("disk\n")
    files = FakeBufferFiles({target: "buffer\n"})
    tools = {tool.name: tool for tool in coding_tools(tmp_path, files=files)}
    assert run(tools["read"], path="a.py").text_content == "buffer"
    run(tools["edit"], path="a.py", old_text="buffer", new_text="edited")
    run(tools["write"], path="b.py", content="new\n")
    assert files.writes == [target, tmp_path / "b.py"]
    assert files.buffers[target] == "edited\n"


def test_the_streamed_edit_check_stays_out_of_files_it_cannot_see(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("on disk\n")
    buffered = EditTool(tmp_path, FakeBufferFiles({})).streaming_check()
    on_disk = EditTool(tmp_path).streaming_check()
    arguments = {"path": "a.py", "old_text": "only in the buffer", "new_text": "x"}
    assert on_disk.check(0, arguments, []) is not None
    assert buffered.check(0, arguments, []) is None
