"""``@path`` attachments: the one rule both front ends use."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from picode.agent.file_blocks import split_attachments
from picode.ai.types import ImageContent, TextContent, UserMessage
from picode.tools.attachments import AttachmentError, attach_mentions
from picode.tools.read import MAX_LINES

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


def _message(text: str, cwd: Path) -> UserMessage:
    found = attach_mentions(text, cwd)
    return UserMessage([TextContent(text), *found.blocks] if found.blocks else text)


def test_a_mentioned_file_follows_the_text_once_and_reads_back_as_attached(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.py").write_text("one\ntwo\nthree\n", encoding="utf-8")
    found = attach_mentions("compare @a.py, then @a.py again", tmp_path)
    assert found.warnings == []
    (block,) = found.blocks
    assert isinstance(block, TextContent)
    assert block.text == '\n\n<file path="a.py" lines="3">\none\ntwo\nthree\n</file>'
    typed, attached = split_attachments(_message("compare @a.py, then @a.py again", tmp_path))
    assert typed == "compare @a.py, then @a.py again"
    assert [a.describe() for a in attached] == ["attached: a.py (3 lines)"]


def test_a_quoted_path_with_spaces_is_attached(tmp_path: Path) -> None:
    (tmp_path / "my notes.txt").write_text("hello\n", encoding="utf-8")
    found = attach_mentions('see @"my notes.txt"', tmp_path)
    assert [a.path for a in found.attached] == ["my notes.txt"]
    _typed, attached = split_attachments(_message('see @"my notes.txt"', tmp_path))
    assert attached[0].path == "my notes.txt"


def test_words_that_are_not_files_stay_and_paths_that_are_missing_warn(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    found = attach_mentions("@dataclass mail me@example.com @docs/nothing.md @src", tmp_path)
    assert found.blocks == []
    assert found.warnings == [
        "@docs/nothing.md: no such file; sent as text",
        "@src is a folder; sent as text (attach files, not folders)",
    ]


def test_a_long_file_is_cut_at_the_read_limit_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"{i}\n" for i in range(5000)), encoding="utf-8")
    found = attach_mentions("@big.txt", tmp_path)
    (block,) = found.blocks
    assert isinstance(block, TextContent)
    assert f"\n{MAX_LINES - 1}\n" in block.text and "\n4999\n" not in block.text
    assert f"read the file from line {MAX_LINES + 1}" in block.text
    _typed, attached = split_attachments(_message("@big.txt", tmp_path))
    assert attached[0].describe() == f"attached: big.txt (first {MAX_LINES} of 5000 lines)"


def test_an_image_goes_as_an_image_block(tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(PNG)
    found = attach_mentions("what is in @shot.png?", tmp_path)
    note, image = found.blocks
    assert isinstance(image, ImageContent) and image.mime_type == "image/png"
    assert base64.b64decode(image.data_base64) == PNG
    assert isinstance(note, TextContent) and 'path="shot.png"' in note.text
    _typed, attached = split_attachments(_message("what is in @shot.png?", tmp_path))
    assert attached[0].describe() == "attached: shot.png (image, 40 B)"


def test_a_binary_file_is_refused_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    with pytest.raises(AttachmentError, match=r"@blob.bin looks like a binary file"):
        attach_mentions("look at @blob.bin", tmp_path)


def test_an_mcp_resource_mention_is_left_to_the_session(tmp_path: Path) -> None:
    found = attach_mentions("see @files:notes://today and @gh:repo://a/b.md", tmp_path)
    assert (found.blocks, found.warnings) == ([], [])
