from __future__ import annotations

import base64
import struct
import tracemalloc
import zlib
from pathlib import Path

import pytest

from picode.ai.types import ImageContent
from picode.tools.read import MAX_BYTES, MAX_LINE_CHARS, MAX_LINES, ReadTool
from tests.tools.helpers import run, run_error


def numbered(count: int, width: int = 0) -> str:
    return "".join(f"line {n}".ljust(width) + "\n" for n in range(1, count + 1))


def test_reads_plain_text_without_line_numbers(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\nbeta\n")
    result = run(ReadTool(tmp_path), path="a.txt")
    assert result.text_content == "alpha\nbeta"
    assert not result.is_error
    assert result.details == {
        "path": "a.txt",
        "start_line": 1,
        "end_line": 2,
        "total_lines": 2,
        "truncated": False,
    }


def test_offset_and_limit_page_through_the_file(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(numbered(10))
    tool = ReadTool(tmp_path)
    first = run(tool, path="a.txt", offset=3, limit=4)
    assert first.text_content.split("\n\n")[0] == "line 3\nline 4\nline 5\nline 6"
    assert "[Showing lines 3-6 of 10. Use offset=7 to continue.]" in first.text_content
    rest = run(tool, path="a.txt", offset=7)
    assert rest.text_content == "line 7\nline 8\nline 9\nline 10"
    assert rest.details["truncated"] is False


def test_head_truncation_at_max_lines(tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text(numbered(MAX_LINES + 500))
    result = run(ReadTool(tmp_path), path="long.txt")
    body, notice = result.text_content.rsplit("\n\n", 1)
    assert body.split("\n") == [f"line {n}" for n in range(1, MAX_LINES + 1)]
    total = MAX_LINES + 500
    assert notice == (
        f"[Showing lines 1-{MAX_LINES} of {total}. Use offset={MAX_LINES + 1} to continue.]"
    )
    assert result.details["truncated"] is True


def test_head_truncation_at_max_bytes(tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text(numbered(1000, width=199))
    result = run(ReadTool(tmp_path), path="wide.txt")
    body = result.text_content.rsplit("\n\n", 1)[0]
    assert len(body.encode()) <= MAX_BYTES
    shown = body.count("\n") + 1
    assert shown == MAX_BYTES // 200
    assert f"[Showing lines 1-{shown} of 1000. Use offset={shown + 1} to continue.]" in (
        result.text_content
    )


def test_long_lines_are_cut_with_a_marker(tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("x" * 5000 + "\nshort\n")
    result = run(ReadTool(tmp_path), path="min.js")
    first, second = result.text_content.split("\n")
    assert first.startswith("x" * MAX_LINE_CHARS + "…")
    assert "[line truncated: 3000 more characters]" in first
    assert second == "short"


def test_ten_megabyte_file_is_read_with_bounded_memory(tmp_path: Path) -> None:
    line_count = 200_000
    (tmp_path / "big.log").write_text(numbered(line_count, width=52))
    assert (tmp_path / "big.log").stat().st_size >= 10 * 1024 * 1024
    tracemalloc.start()
    try:
        result = run(ReadTool(tmp_path), path="big.log", offset=150_000, limit=3)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    lines = result.text_content.split("\n\n")[0].split("\n")
    assert [line.rstrip() for line in lines] == ["line 150000", "line 150001", "line 150002"]
    assert result.details["total_lines"] == line_count
    assert "Use offset=150003 to continue." in result.text_content
    assert peak < 3 * 1024 * 1024


def test_offset_beyond_end_says_how_many_lines_exist(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(numbered(5))
    message = run_error(ReadTool(tmp_path), path="a.txt", offset=9)
    assert "offset 9" in message
    assert "5 lines" in message


def test_empty_file(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("")
    result = run(ReadTool(tmp_path), path="empty.txt")
    assert "empty" in result.text_content
    assert result.details["total_lines"] == 0


def test_binary_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"ELF\x00\x01\x02" * 100)
    message = run_error(ReadTool(tmp_path), path="blob.bin")
    assert "binary" in message
    assert "NUL" in message


def test_invalid_utf8_is_refused(tmp_path: Path) -> None:
    (tmp_path / "latin1.txt").write_bytes("café crème".encode("latin-1"))
    message = run_error(ReadTool(tmp_path), path="latin1.txt")
    assert "binary" in message
    assert "UTF-8" in message


def test_multibyte_character_across_the_sniff_boundary_is_text(tmp_path: Path) -> None:
    # 8191 bytes of short lines, then a two-byte character split by the 8 kB sniff window.
    head = (b"a" * 99 + b"\n") * 81 + b"b" * 91
    assert len(head) == 8191
    (tmp_path / "edge.txt").write_bytes(head + "é\n".encode())
    result = run(ReadTool(tmp_path), path="edge.txt")
    assert result.text_content.endswith("b" * 91 + "é")


def test_bom_is_dropped_and_crlf_shown_as_lines(tmp_path: Path) -> None:
    (tmp_path / "win.txt").write_bytes(b"\xef\xbb\xbffirst\r\nsecond\r\n")
    result = run(ReadTool(tmp_path), path="win.txt")
    assert result.text_content == "first\nsecond"


def tiny_png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def test_png_is_returned_as_an_image_block(tmp_path: Path) -> None:
    data = tiny_png()
    (tmp_path / "pic.dat").write_bytes(data)
    result = run(ReadTool(tmp_path), path="pic.dat")
    images = result.images
    assert len(images) == 1
    assert images[0].mime_type == "image/png"
    assert base64.b64decode(images[0].data_base64) == data
    assert "pic.dat" in result.text_content
    assert result.details == {"path": "pic.dat", "mime_type": "image/png", "bytes": len(data)}


@pytest.mark.parametrize(
    ("head", "mime_type"),
    [
        (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", "image/jpeg"),
        (b"GIF89a\x01\x00\x01\x00\x00\x00\x00", "image/gif"),
        (b"RIFF\x24\x00\x00\x00WEBPVP8 ", "image/webp"),
    ],
)
def test_other_image_types_are_detected_by_magic_bytes(
    tmp_path: Path, head: bytes, mime_type: str
) -> None:
    (tmp_path / "image").write_bytes(head + b"\x00" * 64)
    result = run(ReadTool(tmp_path), path="image")
    assert [block.mime_type for block in result.content if isinstance(block, ImageContent)] == [
        mime_type
    ]


def test_missing_file_suggests_close_names(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("a: 1\n")
    message = run_error(ReadTool(tmp_path), path="config.yml")
    assert "not found: config.yml" in message
    assert "config.yaml" in message


def test_missing_folder_names_nearest_existing_one(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    message = run_error(ReadTool(tmp_path), path="src/nope/deeper/file.py")
    assert "does not exist" in message
    assert "nearest existing folder is src" in message


def test_directory_points_to_ls(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    message = run_error(ReadTool(tmp_path), path="pkg")
    assert "directory" in message
    assert "ls" in message


def test_paths_resolve_against_cwd_and_tilde_expands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (home / "notes.txt").write_text("from home\n")
    (project / "notes.txt").write_text("from project\n")
    monkeypatch.setenv("HOME", str(home))
    tool = ReadTool(project)
    assert run(tool, path="notes.txt").text_content == "from project"
    home_result = run(tool, path="~/notes.txt")
    assert home_result.text_content == "from home"
    assert home_result.details["path"] == str(home / "notes.txt")


def test_invalid_arguments_are_rejected_by_the_schema(tmp_path: Path) -> None:
    from picode.agent.tool import ToolArgumentsError

    with pytest.raises(ToolArgumentsError, match="offset"):
        ReadTool(tmp_path).validate({"path": "a", "offset": 0})


def test_a_huge_single_line_file_is_read_with_bounded_memory(tmp_path: Path) -> None:
    import tracemalloc

    size = 64 * 1024 * 1024
    with (tmp_path / "one-line.min.js").open("wb") as handle:
        for _ in range(size // (1024 * 1024)):
            handle.write(b"a" * (1024 * 1024))
    tracemalloc.start()
    try:
        result = run(ReadTool(tmp_path), path="one-line.min.js")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    text = result.text_content
    assert text.startswith("a" * MAX_LINE_CHARS + "…")
    assert "more characters and 63.0 MB more]" in text
    assert result.details["total_lines"] == 1
    assert peak < 16 * 1024 * 1024  # the whole line would be 64 MB, decoded several times that
