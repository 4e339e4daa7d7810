"""How print mode assembles its prompt (in-process: no child needed)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from picode.ai.types import TextContent
from picode.launch import LaunchError, build_prompt


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_mentions_attach_files_once_after_the_sentence_as_typed(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("print('a')\n", encoding="utf-8")

    prompt, attachments = build_prompt(["compare @a.py, then @a.py again"], read_stdin=False)

    assert prompt == "compare @a.py, then @a.py again"
    (block,) = attachments
    assert isinstance(block, TextContent)
    assert block.text.startswith('\n\n<file path="a.py"') and "print('a')" in block.text


def test_words_that_are_not_files_stay_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    words = ["explain", "@dataclass", "and", "mail me@example.com"]
    prompt, attachments = build_prompt(words, read_stdin=False)

    assert prompt == "explain @dataclass and mail me@example.com"
    assert attachments == []
    assert capsys.readouterr().err == ""


def test_a_missing_file_mention_warns(capsys: pytest.CaptureFixture[str]) -> None:
    prompt, attachments = build_prompt(["read @docs/nothing.md"], read_stdin=False)

    assert prompt == "read @docs/nothing.md" and attachments == []
    assert "@docs/nothing.md: no such file" in capsys.readouterr().err


def test_binary_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02binary")

    with pytest.raises(LaunchError, match="binary"):
        build_prompt(["look at @blob.bin"], read_stdin=False)


def test_piped_stdin_follows_the_words_and_survives_bad_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(b"diff --git \xff\xfe\n+added line\n"))
    monkeypatch.setattr("sys.stdin", stdin)

    prompt, _ = build_prompt(["review", "this"], read_stdin=True)

    assert prompt.startswith("review this\n\ndiff --git ")
    assert "\ufffd" in prompt and prompt.endswith("+added line\n")
