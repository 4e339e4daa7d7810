from __future__ import annotations

import difflib
import stat
from pathlib import Path

import pytest

from picode.tools._diff import unified_diff
from picode.tools._fuzzy import closest_candidates, find_matches
from picode.tools.edit import EditTool
from tests.tools.helpers import run, run_error

SOURCE = "def greet(name):\n    print('hello', name)\n    return name\n"


def test_exact_replacement_returns_a_unified_diff(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(SOURCE)
    result = run(
        EditTool(tmp_path),
        path="app.py",
        old_text="    print('hello', name)\n",
        new_text="    print('hi', name)\n    log(name)\n",
    )
    assert (tmp_path / "app.py").read_text() == (
        "def greet(name):\n    print('hi', name)\n    log(name)\n    return name\n"
    )
    diff = result.details["diff"]
    assert diff.startswith("--- a/app.py\n+++ b/app.py\n@@ -1,3 +1,4 @@\n")
    assert "-    print('hello', name)\n+    print('hi', name)\n+    log(name)\n" in diff
    assert diff.rstrip("\n") in result.text_content
    assert result.details["first_changed_line"] == 2
    assert result.details["path"] == "app.py"
    assert result.details["fuzzy"] is False


def test_crlf_and_bom_survive_an_edit(tmp_path: Path) -> None:
    target = tmp_path / "win.txt"
    target.write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n")
    run(EditTool(tmp_path), path="win.txt", old_text="two\n", new_text="TWO\nand a half\n")
    assert target.read_bytes() == b"\xef\xbb\xbfone\r\nTWO\r\nand a half\r\nthree\r\n"
    # old_text copied with CRLF works as well.
    run(EditTool(tmp_path), path="win.txt", old_text="one\r\nTWO", new_text="1\r\n2")
    assert target.read_bytes() == b"\xef\xbb\xbf1\r\n2\r\nand a half\r\nthree\r\n"


def test_mixed_line_endings_are_left_alone_outside_the_edit(tmp_path: Path) -> None:
    target = tmp_path / "mixed.txt"
    target.write_bytes(b"a\r\nb\nc\r\n")
    run(EditTool(tmp_path), path="mixed.txt", old_text="b", new_text="B")
    assert target.read_bytes() == b"a\r\nB\nc\r\n"


def test_forgiving_match_for_smart_quotes_and_trailing_spaces(tmp_path: Path) -> None:
    target = tmp_path / "doc.md"
    target.write_text(
        "intro\nShe said \u201cit\u2019s fine\u201d   \nand left \u2014 quickly\u2026\nend\n"
    )
    result = run(
        EditTool(tmp_path),
        path="doc.md",
        old_text='She said "it\'s fine"\nand left - quickly...\n',
        new_text="She said nothing.\n",
    )
    assert target.read_text() == "intro\nShe said nothing.\nend\n"
    assert result.details["fuzzy"] is True
    assert "normalising" in result.text_content


def test_forgiving_match_for_nbsp_and_nfkc(tmp_path: Path) -> None:
    target = tmp_path / "t.txt"
    target.write_text("keep\nprice:\u00a010\uff05 \ufb01le\nkeep\n")
    run(EditTool(tmp_path), path="t.txt", old_text="price: 10% file", new_text="price: 12%")
    assert target.read_text() == "keep\nprice: 12%\nkeep\n"


def test_forgiving_match_when_old_text_has_trailing_spaces(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_text("x = 1\ny = 2\n")
    run(EditTool(tmp_path), path="a.py", old_text="x = 1   \ny = 2", new_text="x = 3\ny = 4")
    assert target.read_text() == "x = 3\ny = 4\n"


def test_decomposed_accents_match_composed_text() -> None:
    content = "caf" + "e\u0301" + " au lait\n"
    matches = find_matches(content, "café au")
    assert matches.fuzzy is True
    assert matches.spans == [(0, len("cafe\u0301 au"))]


def test_no_match_names_the_closest_lines(tmp_path: Path) -> None:
    lines = [f"value_{n} = compute({n})" for n in range(1, 40)]
    (tmp_path / "calc.py").write_text("\n".join(lines) + "\n")
    message = run_error(
        EditTool(tmp_path), path="calc.py", old_text="value_17 = compute(71)", new_text="x"
    )
    assert "not found" in message
    assert "line 17" in message
    assert "value_17 = compute(17)" in message
    assert (tmp_path / "calc.py").read_text() == "\n".join(lines) + "\n"


def test_several_matches_list_their_line_numbers(tmp_path: Path) -> None:
    (tmp_path / "dup.py").write_text("a\nreturn None\nb\nreturn None\nc\nreturn None\n")
    message = run_error(EditTool(tmp_path), path="dup.py", old_text="return None", new_text="x")
    assert "3 places" in message
    assert "lines 2, 4, 6" in message
    assert "more surrounding lines" in message


def test_missing_file_points_to_write(tmp_path: Path) -> None:
    message = run_error(EditTool(tmp_path), path="nope.py", old_text="a", new_text="b")
    assert "not found: nope.py" in message
    assert "write" in message


@pytest.mark.parametrize(
    ("old_text", "new_text", "expected"),
    [("", "x", "old_text is empty"), ("same", "same", "identical")],
)
def test_pointless_edits_are_refused(
    tmp_path: Path, old_text: str, new_text: str, expected: str
) -> None:
    (tmp_path / "f.txt").write_text("same\n")
    assert expected in run_error(
        EditTool(tmp_path), path="f.txt", old_text=old_text, new_text=new_text
    )


def test_several_edits_apply_together(tmp_path: Path) -> None:
    target = tmp_path / "m.py"
    target.write_text("a = 1\nb = 2\nc = 3\n")
    result = run(
        EditTool(tmp_path),
        path="m.py",
        edits=[
            {"old_text": "c = 3", "new_text": "c = 30"},
            {"old_text": "a = 1", "new_text": "a = 10"},
        ],
    )
    assert target.read_text() == "a = 10\nb = 2\nc = 30\n"
    assert result.details["replacements"] == 2
    assert result.details["first_changed_line"] == 1


def test_one_failing_edit_changes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "m.py"
    target.write_text("a = 1\nb = 2\n")
    message = run_error(
        EditTool(tmp_path),
        path="m.py",
        edits=[
            {"old_text": "a = 1", "new_text": "a = 10"},
            {"old_text": "zzz", "new_text": "y"},
        ],
    )
    assert message.startswith("edits[1]:")
    assert target.read_text() == "a = 1\nb = 2\n"


def test_overlapping_edits_are_refused(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("abcdef\n")
    message = run_error(
        EditTool(tmp_path),
        path="m.py",
        edits=[{"old_text": "abcd", "new_text": "x"}, {"old_text": "cdef", "new_text": "y"}],
    )
    assert "overlap" in message


def test_edits_and_old_text_together_are_refused(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("a\n")
    message = run_error(
        EditTool(tmp_path),
        path="m.py",
        old_text="a",
        new_text="b",
        edits=[{"old_text": "a", "new_text": "c"}],
    )
    assert "not both" in message


def test_binary_and_non_utf8_files_are_not_edited(tmp_path: Path) -> None:
    (tmp_path / "latin.txt").write_bytes("café".encode("latin-1"))
    assert "UTF-8" in run_error(EditTool(tmp_path), path="latin.txt", old_text="caf", new_text="x")
    (tmp_path / "nul.bin").write_bytes(b"ab\x00cd")
    assert "binary" in run_error(EditTool(tmp_path), path="nul.bin", old_text="ab", new_text="x")


def test_edit_keeps_the_file_mode(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("echo a\n")
    script.chmod(0o755)
    run(EditTool(tmp_path), path="run.sh", old_text="echo a", new_text="echo b")
    assert stat.S_IMODE(script.stat().st_mode) == 0o755


def test_diff_of_a_large_file_matches_difflib() -> None:
    before = [f"line {n}\n" for n in range(1, 5001)]
    after = list(before)
    after[2000] = "changed\n"
    after.insert(4000, "inserted\n")
    diff, first = unified_diff("".join(before), "".join(after), "big.txt")
    expected = "".join(difflib.unified_diff(before, after, "a/big.txt", "b/big.txt"))
    assert diff == expected
    assert first == 2001


def test_diff_marks_a_missing_final_newline() -> None:
    diff, _ = unified_diff("a\nb", "a\nc", "f")
    assert diff.endswith("+c\n\\ No newline at end of file\n")


def test_closest_candidate_in_a_big_file_ignores_indentation() -> None:
    code = "".join(
        f"    def method_{n}(self, arg):\n        return self.value_{n} + arg\n"
        for n in range(5000)
    )
    wrong = "def method_2500(self, argument):\n    return self.value_2500 + argument\n"
    candidates = closest_candidates(code, wrong)
    assert candidates[0].first_line == 5001
    assert candidates[0].lines == [
        "    def method_2500(self, arg):",
        "        return self.value_2500 + arg",
    ]
