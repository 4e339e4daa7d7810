from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest

from picode.agent.tool import EarlyVerdict
from picode.ai.events import ToolCallDeltaEvent
from picode.ai.partial_json import parse_streaming_json
from picode.ai.providers.faux import FauxProvider, FauxToolCall, FauxTurn
from picode.ai.stream import stream_simple
from picode.ai.types import AssistantMessage, Context, ToolCall, UserMessage
from picode.session.recovery.edit_guard import EditGuard
from picode.tools._files import Decoded
from picode.tools._fuzzy import find_matches
from picode.tools.edit import EditTool
from picode.tools.edit_check import stable_prefix

SOURCE = """\
import os


def greet(name: str) -> str:
    message = f"Hello, {name}!"
    return message


def farewell(name: str) -> str:
    return f"Goodbye, {name}."
"""


def guard_for(cwd: Path) -> EditGuard:
    return EditGuard(lambda: [EditTool(cwd)])


class FakeStreamedCall:
    """Streams one tool call's JSON into a partial message the way the builder does."""

    def __init__(self, name: str, earlier: list[ToolCall] | None = None) -> None:
        self.call = ToolCall("call_x", name, {})
        self.message = AssistantMessage(
            content=[*(earlier or []), self.call], api="faux", provider="faux", model="m"
        )
        self.index = len(self.message.content) - 1
        self.raw = ""

    def event(self, piece: str) -> ToolCallDeltaEvent:
        self.raw += piece
        self.call.arguments = parse_streaming_json(self.raw)
        return ToolCallDeltaEvent(self.index, piece, self.message)


def stream_call(
    guard: EditGuard,
    args: dict[str, Any],
    *,
    name: str = "edit",
    chunk: int = 1,
    earlier: list[ToolCall] | None = None,
) -> tuple[list[EarlyVerdict], int, int]:
    """Feed the call in ``chunk``-sized pieces; (verdicts, chars sent at first verdict, total)."""
    raw = json.dumps(args)
    streamed = FakeStreamedCall(name, earlier)
    verdicts: list[EarlyVerdict] = []
    first_at = -1
    for start in range(0, len(raw), chunk):
        verdict = guard.feed(streamed.event(raw[start : start + chunk]))
        if verdict is not None:
            verdicts.append(verdict)
            if first_at < 0:
                first_at = start + chunk
    return verdicts, first_at, len(raw)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "greet.py").write_text(SOURCE, encoding="utf-8")
    return tmp_path


def test_missing_file_is_reported_as_soon_as_the_path_is_complete(project: Path) -> None:
    guard = guard_for(project)
    args = {"path": "src/gret.py", "old_text": "x" * 400, "new_text": "y"}
    verdicts, first_at, total = stream_call(guard, args)
    assert len(verdicts) == 1
    verdict = verdicts[0]
    assert verdict.reason == "file not found"
    assert verdict.subject == "src/gret.py"
    assert "src/greet.py" in verdict.tool_message  # the close name is suggested
    assert "write" in verdict.tool_message
    assert first_at < 60 < total


def test_directory_is_reported(project: Path) -> None:
    verdicts, _, _ = stream_call(guard_for(project), {"path": "src", "old_text": "abc"})
    assert [v.reason for v in verdicts] == ["path is a directory"]


def test_impossible_prefix_stops_early_with_the_nearest_lines(project: Path) -> None:
    old_text = (
        "def greet(name: str) -> str:\n"
        '    message = f"Hi there, {name}!"\n'
        "    return message\n" + "    # padding\n" * 40
    )
    args = {"path": "src/greet.py", "old_text": old_text, "new_text": "pass\n"}
    verdicts, first_at, total = stream_call(guard_for(project), args)
    assert len(verdicts) == 1
    verdict = verdicts[0]
    assert verdict.reason == "old_text not found"
    assert first_at < total // 3
    message = verdict.tool_message
    assert "old_text was not found in src/greet.py" in message
    assert "Its first 1 line match the file from line 4" in message
    # Stopped inside line 2, as soon as it could no longer match:
    assert "line 2 does not: '    message = f\"Hi' (as far as it was written)" in message
    assert '     5      message = f"Hello, {name}!"' in message  # line 5, as in the file
    assert "Nearest lines in the file:" in message


def test_first_line_not_in_file(project: Path) -> None:
    args = {"path": "src/greet.py", "old_text": "def greeting(person):\n    pass\n"}
    (verdict,), _, _ = stream_call(guard_for(project), args)
    assert "Its first line is not in the file: 'def greeting(person):'" in verdict.tool_message
    assert "     4  def greet(name: str) -> str:" in verdict.tool_message


def test_short_complete_old_text_is_checked_once_complete(project: Path) -> None:
    args = {"path": "src/greet.py", "old_text": "import sys", "new_text": "import re"}
    verdicts, first_at, _ = stream_call(guard_for(project), args)
    assert [v.reason for v in verdicts] == ["old_text not found"]
    assert first_at > len('{"path": "src/greet.py", "old_text": "import sys"')


@pytest.mark.parametrize("chunk", [1, 3, 7, 64])
def test_valid_exact_edit_is_never_stopped(project: Path, chunk: int) -> None:
    args = {
        "path": "src/greet.py",
        "old_text": 'def farewell(name: str) -> str:\n    return f"Goodbye, {name}."\n',
        "new_text": "def farewell(name):\n    return 'bye'\n",
    }
    verdicts, _, _ = stream_call(guard_for(project), args, chunk=chunk)
    assert verdicts == []


FUZZY_FILE = (
    "title = \u201cSmart quotes\u201d   \r\n"
    "range = 1\u20132\u00a0items\r\n"
    "caf\u00e9 = 'cr\u00e8me br\u00fbl\u00e9e'\r\n"
    "end = True\r\n"
)


@pytest.mark.parametrize("chunk", [1, 2, 5])
def test_forgiving_edit_is_never_stopped(tmp_path: Path, chunk: int) -> None:
    (tmp_path / "fuzzy.txt").write_bytes(FUZZY_FILE.encode("utf-8"))
    old_text = (
        'title = "Smart quotes"\n'  # ASCII quotes, no trailing spaces, LF
        "range = 1-2 items\n"  # ASCII dash and space
        "cafe\u0301 = 'cre\u0300me bru\u0302le\u0301e'\n"  # decomposed accents
        "end = True"
    )
    args = {"path": "fuzzy.txt", "old_text": old_text, "new_text": "x"}
    verdicts, _, _ = stream_call(guard_for(tmp_path), args, chunk=chunk)
    assert verdicts == []


def test_forgiving_match_still_catches_a_real_difference(tmp_path: Path) -> None:
    (tmp_path / "fuzzy.txt").write_bytes(FUZZY_FILE.encode("utf-8"))
    old_text = 'title = "Smart quotes"\nrange = 1-3 items\nend = True\n'
    (verdict,), _, _ = stream_call(
        guard_for(tmp_path), {"path": "fuzzy.txt", "old_text": old_text, "new_text": ""}
    )
    assert "line 2 does not: 'range = 1-3" in verdict.tool_message
    assert "     2  range = 1\u20132\u00a0items" in verdict.tool_message


def test_multiple_edits_form(project: Path) -> None:
    good = {"old_text": "import os\n", "new_text": "import sys\n"}
    bad = {"old_text": "def farewell(name: str) -> int:\n    return 0\n", "new_text": ""}
    args = {"path": "src/greet.py", "edits": [good, good | {"old_text": "return message"}, bad]}
    verdicts, _, _ = stream_call(guard_for(project), args)
    assert len(verdicts) == 1
    assert "edits[2].old_text was not found" in verdicts[0].tool_message
    fine = {"path": "src/greet.py", "edits": [good, good | {"old_text": "return message"}]}
    assert stream_call(guard_for(project), fine)[0] == []


def test_other_tools_and_files_written_earlier_are_left_alone(project: Path) -> None:
    args = {"path": "src/new.py", "old_text": "anything at all, really, that is long"}
    assert stream_call(guard_for(project), args, name="write")[0] == []
    earlier = [ToolCall("call_w", "write", {"path": "./src/new.py", "content": "x"})]
    assert stream_call(guard_for(project), args, earlier=earlier)[0] == []


def test_reset_forgets_cached_file_text(project: Path) -> None:
    guard = guard_for(project)
    args = {"path": "src/greet.py", "old_text": "import json", "new_text": "x"}
    assert len(stream_call(guard, args)[0]) == 1
    (project / "src" / "greet.py").write_text("import json\n", encoding="utf-8")
    guard.reset()
    assert stream_call(guard, args)[0] == []


def test_stable_prefix_stops_before_unfinished_non_ascii() -> None:
    assert stable_prefix("line one\nabc def") == "line one\nabc de"
    assert stable_prefix("line one\ncafe\u0301") == "line one\ncaf"
    assert stable_prefix("done\n") == "done\n"
    assert stable_prefix("\u00e9\u00e9") == ""


def random_valid_old_text(rng: random.Random, lines: list[str]) -> str:
    first = rng.randrange(len(lines))
    last = rng.randrange(first, min(len(lines), first + 6))
    chosen = lines[first : last + 1]
    chosen[0] = chosen[0][rng.randrange(len(chosen[0]) + 1) :]  # may start mid-line
    text = "\n".join(chosen)
    swaps = {"\u201c": '"', "\u201d": '"', "\u2013": "-", "\u00a0": " ", "\u00e9": "e\u0301"}
    if rng.random() < 0.5:
        for fancy, plain in swaps.items():
            text = text.replace(fancy, plain)
    if rng.random() < 0.3:
        text = text.replace("\n", "  \n")  # trailing spaces the file does not have
    return text


@pytest.mark.parametrize("seed", range(40))
def test_random_valid_edits_are_never_stopped(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    lines = [
        f"line {i}: caf\u00e9 \u201cq\u201d 1\u20132\u00a0x {'y' * rng.randrange(30)}"
        for i in range(30)
    ]
    crlf = rng.random() < 0.5
    data = ("\r\n" if crlf else "\n").join(lines).encode()
    (tmp_path / "f.txt").write_bytes(data)
    old_text = random_valid_old_text(rng, lines)
    if not old_text.strip():
        old_text = lines[0]
    # The edit tool itself accepts it:
    assert find_matches(Decoded.from_bytes(data, "f.txt").text, old_text).spans
    args = {"path": "f.txt", "old_text": old_text, "new_text": "z"}
    assert stream_call(guard_for(tmp_path), args, chunk=rng.choice([1, 2, 9]))[0] == []


def test_guard_on_a_scripted_stream(project: Path) -> None:
    bad_edit = FauxToolCall(
        "edit",
        {
            "path": "src/greet.py",
            "old_text": "def greet(name):\n" + "    pass\n" * 200,
            "new_text": "",
        },
    )

    async def go() -> list[EarlyVerdict]:
        provider = FauxProvider([FauxTurn([bad_edit])], chunk_size=4)
        try:
            stream = stream_simple(provider.model, Context(messages=[UserMessage("edit")]))
            guard = guard_for(project)
            verdicts = []
            async for event in stream:
                verdict = guard.feed(event)
                if verdict is not None:
                    verdicts.append(verdict)
            return verdicts
        finally:
            provider.close()

    verdicts = asyncio.run(asyncio.wait_for(go(), 10))
    assert [v.reason for v in verdicts] == ["old_text not found"]


class FakeStrictTool:
    """Any tool may offer a streaming check; the guard knows nothing of edit."""

    name = "deploy"

    def __init__(self) -> None:
        self.seen: list[tuple[int, dict[str, Any], list[tuple[str, dict[str, Any]]]]] = []

    def streaming_check(self) -> FakeStrictTool:
        return self

    def check(self, index: int, arguments: dict[str, Any], earlier: Any) -> EarlyVerdict | None:
        self.seen.append((index, dict(arguments), list(earlier)))
        if arguments.get("target") == "production":
            return EarlyVerdict("production", "not allowed", "Deploy to staging instead.")
        return None


def test_any_tool_with_a_streaming_check_is_asked_and_stopped_once() -> None:
    tool = FakeStrictTool()
    guard = EditGuard(lambda: [tool])  # type: ignore[list-item]
    earlier = [ToolCall("c0", "read", {"path": "a"})]
    verdicts, _, _ = stream_call(
        guard, {"target": "production", "note": "x" * 20}, name="deploy", earlier=earlier
    )
    assert [v.tool_message for v in verdicts] == ["Deploy to staging instead."]
    assert tool.seen and all(index == 1 for index, _, _ in tool.seen)
    assert tool.seen[0][2] == [("read", {"path": "a"})]
    # Stopped calls are not judged again.
    assert tool.seen[-1][1].get("target") == "production"
