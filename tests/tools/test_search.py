from __future__ import annotations

import sys
from pathlib import Path

import pytest

from picode.agent.tool import ToolError
from picode.ai.abort import AbortController
from picode.tools import rg_path
from picode.tools.find import FindTool
from picode.tools.grep import GrepTool
from picode.tools.ls import LsTool
from tests.tools.helpers import call, has_child_named, run, run_error, write_tree


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_tree(
        tmp_path,
        {
            ".gitignore": "build/\n*.log\n",
            "src/app.py": "import os\nresult = foo(42)\nflag = '-x'\nprint(result)\n",
            "src/util/helpers.py": "def helper():\n    return 'a.b'\n# axb\n",
            "src/util/notes.txt": "TODO: Foo the bar\n",
            ".config/settings.toml": "foo = 1\n",
            "build/out.py": "result = foo(1)\n",
            "debug.log": "foo(7)\n",
            ".git/config": "foo(9)\n",
        },
    )
    return tmp_path


def test_grep_regex_with_metacharacters(project: Path) -> None:
    result = run(GrepTool(project), pattern=r"foo\(\d+\)")
    assert result.text_content == "src/app.py:2: result = foo(42)"
    assert result.details == {"matches": 1, "total_matches": 1, "truncated": False}


def test_grep_respects_gitignore_outside_a_git_repo(tmp_path: Path) -> None:
    write_tree(
        tmp_path, {".gitignore": "ignored/\n", "ignored/a.txt": "needle\n", "b.txt": "needle\n"}
    )
    assert run(GrepTool(tmp_path), pattern="needle").text_content == "b.txt:1: needle"


def test_grep_searches_hidden_files_but_not_dot_git(project: Path) -> None:
    lines = run(GrepTool(project), pattern="foo").text_content.split("\n")
    paths = [line.split(":")[0] for line in lines]
    assert paths == [".config/settings.toml", "src/app.py"]


def test_grep_pattern_starting_with_a_dash(project: Path) -> None:
    assert run(GrepTool(project), pattern="-x").text_content == "src/app.py:3: flag = '-x'"


def test_grep_literal_and_ignore_case(project: Path) -> None:
    regex = run(GrepTool(project), pattern="a.b", path="src/util").text_content
    assert regex.split("\n") == [
        "src/util/helpers.py:2:     return 'a.b'",
        "src/util/helpers.py:3: # axb",
    ]
    literal = run(GrepTool(project), pattern="a.b", path="src/util", literal=True).text_content
    assert literal == "src/util/helpers.py:2:     return 'a.b'"
    insensitive = run(GrepTool(project), pattern="todo: foo", ignore_case=True).text_content
    assert insensitive == "src/util/notes.txt:1: TODO: Foo the bar"


def test_grep_glob_filters_files(project: Path) -> None:
    result = run(GrepTool(project), pattern="o", glob="*.txt")
    assert result.text_content == "src/util/notes.txt:1: TODO: Foo the bar"


def test_grep_context_lines_and_separators(tmp_path: Path) -> None:
    body = "\n".join(["hit"] + [f"filler {n}" for n in range(1, 8)] + ["hit", "tail"]) + "\n"
    write_tree(tmp_path, {"f.txt": body})
    result = run(GrepTool(tmp_path), pattern="hit", context=1)
    assert result.text_content.split("\n") == [
        "f.txt:1: hit",
        "f.txt-2- filler 1",
        "--",
        "f.txt-8- filler 7",
        "f.txt:9: hit",
        "f.txt-10- tail",
    ]


def test_grep_limit_and_note(tmp_path: Path) -> None:
    write_tree(tmp_path, {"many.txt": "".join(f"match {n}\n" for n in range(150))})
    result = run(GrepTool(tmp_path), pattern="match")
    body, note = result.text_content.split("\n\n")
    assert len(body.split("\n")) == 100
    assert body.split("\n")[-1] == "many.txt:100: match 99"
    assert note == "[50 more results not shown; narrow the pattern or raise limit]"
    assert result.details == {"matches": 100, "total_matches": 150, "truncated": True}
    small = run(GrepTool(tmp_path), pattern="match", limit=3, context=1)
    assert small.text_content.split("\n\n")[0].split("\n") == [
        "many.txt:1: match 0",
        "many.txt:2: match 1",
        "many.txt:3: match 2",
    ]


def test_grep_cuts_long_lines(tmp_path: Path) -> None:
    write_tree(tmp_path, {"min.js": "needle" + "x" * 5000 + "\n"})
    line = run(GrepTool(tmp_path), pattern="needle").text_content
    assert line.startswith("min.js:1: needle")
    assert len(line) < 600
    assert "more chars]" in line


def test_grep_errors_and_empty_results(project: Path) -> None:
    assert "not found" in run_error(GrepTool(project), pattern="x", path="nowhere")
    message = run_error(GrepTool(project), pattern="foo(")
    assert "regex parse error" in message
    assert "literal=true" in message
    nothing = run(GrepTool(project), pattern="absent_text_123")
    assert not nothing.is_error
    assert "No matches" in nothing.text_content


def test_grep_a_single_file(project: Path) -> None:
    result = run(GrepTool(project), pattern="result", path="src/app.py")
    assert result.text_content == "src/app.py:2: result = foo(42)\nsrc/app.py:4: print(result)"


def test_search_after_abort_is_an_error(project: Path) -> None:
    import asyncio

    controller = AbortController()
    controller.abort()
    with pytest.raises(ToolError, match="aborted"):
        asyncio.run(call(GrepTool(project), controller.signal, pattern="foo"))


def test_missing_rg_is_explained(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rg_path.shutil, "which", lambda _name: None)
    monkeypatch.setattr(sys, "executable", str(project / "no-venv" / "python"))
    assert "ripgrep" in run_error(GrepTool(project), pattern="foo")


def test_find_globs_at_any_depth_sorted_and_relative(project: Path) -> None:
    result = run(FindTool(project), pattern="*.py")
    assert result.text_content == "src/app.py\nsrc/util/helpers.py"
    assert result.details == {"files": 2, "total_files": 2, "truncated": False}


def test_find_path_globs_hidden_files_and_subfolders(project: Path) -> None:
    assert run(FindTool(project), pattern="src/**/*.py").text_content == (
        "src/app.py\nsrc/util/helpers.py"
    )
    assert run(FindTool(project), pattern="*.toml").text_content == ".config/settings.toml"
    assert run(FindTool(project), pattern="*", path="src/util").text_content == (
        "src/util/helpers.py\nsrc/util/notes.txt"
    )
    assert run(FindTool(project), pattern="config").text_content.startswith("No files")


def test_find_pattern_starting_with_a_dash(tmp_path: Path) -> None:
    write_tree(tmp_path, {"-weird.txt": "", "normal.txt": ""})
    assert run(FindTool(tmp_path), pattern="-*").text_content == "-weird.txt"


def test_find_limit_and_note(tmp_path: Path) -> None:
    write_tree(tmp_path, {f"f{n:03}.txt": "" for n in range(30)})
    result = run(FindTool(tmp_path), pattern="*.txt", limit=10)
    body, note = result.text_content.split("\n\n")
    assert body.split("\n") == [f"f{n:03}.txt" for n in range(10)]
    assert note == "[20 more results not shown; narrow the pattern or raise limit]"


def test_find_errors(project: Path) -> None:
    assert "not found" in run_error(FindTool(project), pattern="*", path="missing")
    assert "not a folder" in run_error(FindTool(project), pattern="*", path="src/app.py")


def test_ls_sorted_with_folders_marked_and_dotfiles(project: Path) -> None:
    result = run(LsTool(project))
    assert result.text_content.split("\n") == [
        ".config/",
        ".git/",
        ".gitignore",
        "build/",
        "debug.log",
        "src/",
    ]
    assert run(LsTool(project), path="src").text_content == "app.py\nutil/"


def test_ls_limit_and_note(tmp_path: Path) -> None:
    write_tree(tmp_path, {f"e{n:02}": "" for n in range(12)})
    result = run(LsTool(tmp_path), limit=5)
    body, note = result.text_content.split("\n\n")
    assert body.split("\n") == [f"e{n:02}" for n in range(5)]
    assert note.startswith("[7 more results not shown")
    assert result.details == {"path": ".", "entries": 5, "total_entries": 12, "truncated": True}


def test_ls_errors_and_empty_folder(project: Path) -> None:
    assert "not found" in run_error(LsTool(project), path="nope")
    assert "use read" in run_error(LsTool(project), path="debug.log")
    (project / "empty").mkdir()
    assert "empty" in run(LsTool(project), path="empty").text_content


def test_paths_outside_cwd_are_shown_absolute(tmp_path: Path) -> None:
    inside = tmp_path / "work"
    outside = tmp_path / "other"
    write_tree(outside, {"x.txt": "needle\n"})
    inside.mkdir()
    result = run(GrepTool(inside), pattern="needle", path=str(outside))
    assert result.text_content == f"{outside / 'x.txt'}:1: needle"
    assert run(GrepTool(inside), pattern="needle", path="../other").text_content == (
        f"{outside / 'x.txt'}:1: needle"
    )


def test_abort_stops_a_running_search(tmp_path: Path) -> None:
    import asyncio
    import os

    # rg blocks opening a FIFO nobody writes to: a search that only an abort can end.
    os.mkfifo(tmp_path / "pipe")

    async def scenario() -> None:
        controller = AbortController()
        task = asyncio.create_task(
            call(GrepTool(tmp_path), controller.signal, pattern="x", path="pipe")
        )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10
        while not has_child_named("rg") and loop.time() < deadline:
            await asyncio.sleep(0.01)
        assert has_child_named("rg")
        controller.abort()
        await asyncio.wait_for(task, 10)

    with pytest.raises(ToolError, match="aborted"):
        asyncio.run(scenario())
