from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from picode.ai.events import (
    AssistantMessageEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallDeltaEvent,
)
from picode.ai.providers.faux import FauxProvider, FauxText, FauxThinking, FauxToolCall, FauxTurn
from picode.ai.stream import stream_simple
from picode.ai.types import (
    AssistantMessage,
    Context,
    TextContent,
    ThinkingContent,
    ToolCall,
    UserMessage,
)
from picode.session.recovery.rules import (
    WINDOW,
    Rule,
    RuleMatcher,
    is_reminder,
    load_rules,
    path_matches_globs,
    reminder_message,
)


def write_rule(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(text, encoding="utf-8")
    return path


def load_one(tmp_path: Path, text: str, name: str = "rule") -> tuple[list[Rule], list[str]]:
    write_rule(tmp_path / "project", name, text)
    return load_rules(tmp_path / "project", tmp_path / "user")


def make_rule(
    name: str,
    *patterns: str,
    scopes: tuple[str, ...] = ("text",),
    globs: tuple[str, ...] = (),
    once: bool = True,
) -> Rule:
    return Rule(
        name,
        [re.compile(p) for p in patterns],
        list(scopes),
        list(globs),
        f"Do not do {name}.",
        Path(f"{name}.md"),
        once,
    )


# --- loading -------------------------------------------------------------------------------


def test_scalar_condition_default_scope_and_name(tmp_path: Path) -> None:
    rules, problems = load_one(tmp_path, "---\ncondition: console\\.log\n---\nUse the logger.\n")
    assert problems == []
    (rule,) = rules
    assert rule.name == "rule"
    assert [p.pattern for p in rule.conditions] == [r"console\.log"]
    assert rule.scopes == ["text"]
    assert rule.globs == []
    assert rule.once is True
    assert rule.body == "Use the logger."


def test_flow_and_block_lists_quotes_and_comments(tmp_path: Path) -> None:
    text = (
        "\ufeff---\r\n"
        "# a comment line\r\n"
        'name: "no-any"\r\n'
        "condition: ['\\bAny\\b', \"x{1,3}\"]  # trailing comment\r\n"
        "scope:\r\n"
        "  - tool:edit\r\n"
        "  - 'tool:write'\r\n"
        'globs: ["*.py", src/**/*.pyi]\r\n'
        "once: false\r\n"
        "---\r\n"
        "Type it properly.\r\n"
    )
    rules, problems = load_one(tmp_path, text)
    assert problems == []
    (rule,) = rules
    assert rule.name == "no-any"
    assert [p.pattern for p in rule.conditions] == [r"\bAny\b", "x{1,3}"]
    assert rule.scopes == ["tool:edit", "tool:write"]
    assert rule.globs == ["*.py", "src/**/*.pyi"]
    assert rule.once is False
    assert rule.body == "Type it properly."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\ncondition: foo(\n---\nbody", "not a valid regular expression"),
        ("---\nscope: text\n---\nbody", "'condition' is missing"),
        ("condition: x\nbody", "no front matter"),
        ("---\ncondition: x\nbody", "not closed"),
        ("---\ncondition: x\n---\n\n", "body"),
        ("---\ncondition: x\nscope: tools\n---\nbody", "scope 'tools'"),
        ("---\ncondition: x\nonce: sometimes\n---\nbody", "'once' must be true or false"),
        ("---\ncondition: [a, 'b\n---\nbody", "unclosed"),
        ("---\ncondition: x\nthis is not yaml\n---\nbody", "line 3"),
    ],
)
def test_bad_rule_files_are_reported_and_skipped(tmp_path: Path, text: str, expected: str) -> None:
    write_rule(tmp_path / "project", "good", "---\ncondition: ok\n---\nfine")
    bad = write_rule(tmp_path / "project", "bad", text)
    rules, problems = load_rules(tmp_path / "project", tmp_path / "user")
    assert [rule.name for rule in rules] == ["good"]
    assert len(problems) == 1
    assert str(bad) in problems[0]
    assert expected in problems[0]
    assert "skipped" in problems[0]


def test_unknown_key_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    rules, problems = load_one(tmp_path, "---\ncondition: x\nseverity: high\n---\nbody")
    assert [rule.name for rule in rules] == ["rule"]
    assert len(problems) == 1
    assert "unknown key 'severity'" in problems[0]


def test_user_rule_keeps_its_name_against_a_project_rule(tmp_path: Path) -> None:
    write_rule(tmp_path / "project", "style", "---\ncondition: a\n---\nproject body")
    write_rule(tmp_path / "project", "extra", "---\ncondition: d\n---\nproject only")
    write_rule(tmp_path / "user", "style", "---\ncondition: b\n---\nuser body")
    write_rule(tmp_path / "user", "other", "---\ncondition: c\n---\nuser only")
    rules, problems = load_rules(tmp_path / "project", tmp_path / "user")
    assert [(r.name, r.body) for r in rules] == [
        ("other", "user only"),
        ("style", "user body"),
        ("extra", "project only"),
    ]
    assert len(problems) == 1
    assert "project/style.md" in problems[0]
    assert "already used by your rule" in problems[0]


def test_untrusted_project_rules_are_not_read(tmp_path: Path) -> None:
    write_rule(tmp_path / "project", "style", "---\ncondition: a\n---\nproject body")
    write_rule(tmp_path / "user", "other", "---\ncondition: c\n---\nuser only")
    rules, problems = load_rules(None, tmp_path / "user")
    assert [(r.name, r.body) for r in rules] == [("other", "user only")]
    assert problems == []


def test_missing_folders_give_nothing(tmp_path: Path) -> None:
    assert load_rules(tmp_path / "nope", tmp_path / "neither") == ([], [])


def test_globs_match_path_tails() -> None:
    assert path_matches_globs("src/app/main.py", ["*.py"])
    assert path_matches_globs("./src/app/main.py", ["src/**/*.py"])
    assert path_matches_globs("/abs/project/src/main.py", ["src/*.py"])
    assert path_matches_globs("main.py", ["**/*.py"])
    assert not path_matches_globs("src/readme.md", ["*.py", "docs/*"])
    assert path_matches_globs("anything", [])


# --- matching (hand-built events) ---------------------------------------------------------


def partial(*blocks: Any) -> AssistantMessage:
    return AssistantMessage(content=list(blocks), api="faux", provider="faux", model="m")


def feed_text(matcher: RuleMatcher, pieces: list[str], index: int = 0) -> Rule | None:
    message = partial(TextContent(""))
    for piece in pieces:
        block = message.content[index]
        assert isinstance(block, TextContent)
        block.text += piece
        found = matcher.feed(TextDeltaEvent(index, piece, message))
        if found is not None:
            return found
    return None


def test_match_split_across_deltas_is_caught() -> None:
    matcher = RuleMatcher([make_rule("no-todo", r"TODO\(\w+\)")])
    found = feed_text(matcher, ["Here is the plan: TO", "DO(al", "ice) fix"])
    assert found is not None and found.name == "no-todo"
    assert matcher.fired == {"no-todo"}


def test_scopes_select_the_kind_of_block() -> None:
    text_rule = make_rule("t", "secret")
    thinking_rule = make_rule("th", "secret", scopes=("thinking",))
    matcher = RuleMatcher([text_rule, thinking_rule])
    message = partial(ThinkingContent("secret"), TextContent(""))
    assert matcher.feed(ThinkingDeltaEvent(0, "the secret", message)) is thinking_rule
    assert matcher.feed(TextDeltaEvent(1, "a secret", message)) is text_rule
    # Non-delta events never match.
    assert matcher.feed(ToolCallDeltaEvent(1, "secret", message)) is None


def tool_message(name: str, args: dict[str, Any]) -> AssistantMessage:
    return partial(ToolCall("call_1", name, args))


def test_tool_scope_and_tool_name_scope() -> None:
    any_tool = make_rule("any", "rm -rf", scopes=("tool",))
    edit_only = make_rule("edit-only", "print\\(", scopes=("tool:edit",))
    matcher = RuleMatcher([any_tool, edit_only])
    bash = tool_message("bash", {"command": "rm -rf /"})
    assert matcher.feed(ToolCallDeltaEvent(0, '{"command": "print(1)"}', bash)) is None
    assert matcher.feed(ToolCallDeltaEvent(0, '"rm -rf /"', bash)) is any_tool
    matcher.reset_buffers()
    edit = tool_message("edit", {"path": "a.py"})
    assert matcher.feed(ToolCallDeltaEvent(0, '{"new_text": "print(x)"}', edit)) is edit_only
    # Text blocks are not tool blocks.
    assert matcher.feed(TextDeltaEvent(0, "rm -rf", partial(TextContent("rm -rf")))) is None


def test_globs_restrict_tool_rules_to_matching_paths() -> None:
    rule = make_rule("py-print", r"print\(", scopes=("tool",), globs=("*.py",))
    matcher = RuleMatcher([rule])
    markdown = tool_message("write", {"path": "notes.md"})
    assert matcher.feed(ToolCallDeltaEvent(0, 'print("hi")', markdown)) is None
    matcher.reset_buffers()
    python = tool_message("write", {"path": "src/app.py"})
    assert matcher.feed(ToolCallDeltaEvent(0, 'print("hi")', python)) is rule


def test_text_seen_before_the_path_is_rescanned_when_the_path_arrives() -> None:
    rule = make_rule("py-print", r"print\(", scopes=("tool:write",), globs=("*.py",))
    matcher = RuleMatcher([rule])
    message = tool_message("write", {})
    call = message.content[0]
    assert isinstance(call, ToolCall)
    assert (
        matcher.feed(ToolCallDeltaEvent(0, '{"content": "print(1)' + " " * 2000, message)) is None
    )
    call.arguments = {"content": "print(1)", "path": "tool.py"}
    assert matcher.feed(ToolCallDeltaEvent(0, '", "path": "tool.py"}', message)) is rule


def test_each_rule_fires_once_per_session_and_fired_is_restored() -> None:
    rule = make_rule("no-sorry", "(?i)sorry")
    matcher = RuleMatcher([rule])
    assert feed_text(matcher, ["I am so", "rry"]) is rule
    matcher.reset_buffers()
    assert feed_text(matcher, ["Sorry again"]) is None
    resumed = RuleMatcher([rule], fired=matcher.fired)
    assert feed_text(resumed, ["sorry"]) is None
    fresh = RuleMatcher([rule])
    assert feed_text(fresh, ["sorry"]) is rule


def test_rule_with_once_false_fires_again_in_a_later_message_only() -> None:
    rule = make_rule("again", "oops", once=False)
    matcher = RuleMatcher([rule])
    assert feed_text(matcher, ["oops"]) is rule
    assert feed_text(matcher, ["oops"]) is None  # same message
    matcher.reset_buffers()
    assert feed_text(matcher, ["oops"]) is rule
    assert matcher.fired == set()


def test_anchors_see_the_real_start_of_the_block() -> None:
    rule = make_rule("starts-with-ok", "^OK")
    matcher = RuleMatcher([rule])
    # The last delta's search starts exactly at "OK", which is not the block's start.
    assert feed_text(matcher, ["x" * (4 * WINDOW), "OK" + "y" * (WINDOW - 2), "z"]) is None
    matcher.reset_buffers()
    assert feed_text(matcher, ["O", "K then"]) is rule


class FakePattern:
    """Records how much text each search had to look at."""

    def __init__(self, needle: str) -> None:
        self.pattern = needle
        self.needle = needle
        self.scanned: list[int] = []
        self.string_lengths: list[int] = []

    def search(self, string: str, pos: int = 0) -> re.Match[str] | None:
        self.scanned.append(len(string) - pos)
        self.string_lengths.append(len(string))
        return re.compile(re.escape(self.needle)).search(string, pos)


def test_work_per_delta_is_bounded_by_the_tail_window() -> None:
    pattern = FakePattern("NEEDLE")
    rule = Rule("bounded", [pattern], ["text"], [], "body", Path("b.md"))  # type: ignore[list-item]
    matcher = RuleMatcher([rule])
    pieces = ["abcdefg"] * 20_000 + ["NEE", "DLE"]
    found = feed_text(matcher, pieces)
    assert found is rule
    assert max(pattern.scanned) <= WINDOW + len("abcdefg")
    assert max(pattern.string_lengths) <= 2 * WINDOW + len("abcdefg")
    assert len(pattern.scanned) == len(pieces)


def test_reminder_message_is_recognisable() -> None:
    rule = make_rule("no-print", "print")
    reminder = reminder_message(rule)
    assert isinstance(reminder, UserMessage)
    assert "Rule 'no-print' applies" in reminder.text
    assert "Do not do no-print." in reminder.text
    assert reminder.text.startswith("<system-reminder>\n")
    assert reminder.text.endswith("</system-reminder>")
    assert is_reminder(reminder)
    assert not is_reminder(UserMessage("a normal question"))


# --- matching a real stream ----------------------------------------------------------------


async def collect_events(turn: FauxTurn, chunk_size: int) -> list[AssistantMessageEvent]:
    provider = FauxProvider([turn], chunk_size=chunk_size)
    try:
        stream = stream_simple(provider.model, Context(messages=[UserMessage("go")]))
        return [event async for event in stream]
    finally:
        provider.close()


def test_rules_on_a_scripted_stream() -> None:
    turn = FauxTurn(
        [
            FauxThinking("I could just skip the tests here."),
            FauxText("Writing the file now."),
            FauxToolCall("write", {"path": "pkg/mod.py", "content": "import pdb; pdb.set_trace()"}),
        ]
    )
    events = asyncio.run(asyncio.wait_for(collect_events(turn, chunk_size=3), 10))
    rules = [
        make_rule("no-skip", r"skip the tests", scopes=("thinking",)),
        make_rule("no-pdb", r"pdb\.set_trace", scopes=("tool:write",), globs=("*.py",)),
        make_rule("never", "not in the stream"),
    ]
    matcher = RuleMatcher(rules)
    matcher.reset_buffers()
    fired = [rule.name for rule in (matcher.feed(e) for e in events) if rule is not None]
    assert fired == ["no-skip", "no-pdb"]


def test_every_example_in_the_docs_loads(tmp_path: Path) -> None:
    docs = Path(__file__).resolve().parents[2] / "docs" / "stream-rules.md"
    blocks = re.findall(r"```markdown\n(.*?)```", docs.read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 4
    for number, block in enumerate(blocks):
        write_rule(tmp_path / "project", f"example{number}", block)
    rules, problems = load_rules(tmp_path / "project", tmp_path / "user")
    assert problems == []
    assert len(rules) == len(blocks)
    by_name = {rule.name: rule for rule in rules}
    assert by_name["no-force-push"].conditions[0].search("git push --force origin")
    assert by_name["example0"].matches_path("web/src/app/main.ts")
