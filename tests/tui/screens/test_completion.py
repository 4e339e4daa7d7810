"""Completion: slash commands, the trigger at the cursor, the file index and its ranking."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from picode.tools.rg_path import find_rg
from picode.tui.completion import (
    BUILTIN_COMMANDS,
    CommandRegistry,
    CompletionItem,
    CompletionPopup,
    FileIndex,
    FileIndexError,
    SlashCommand,
    UnknownCommandError,
    apply_completion,
    find_trigger,
)
from picode.tui.completion.fuzzy import rank, score
from tests.tui.conftest import run, wait_until
from tests.tui.hosts import WidgetHost

needs_rg = pytest.mark.skipif(find_rg() is None, reason="ripgrep (rg) is not installed")

# --- commands -----------------------------------------------------------------------------


def test_builtin_commands_are_all_there_in_order() -> None:
    registry = CommandRegistry()
    names = [c.name for c in registry.complete("")]
    assert names == [
        "model",
        "thinking",
        "theme",
        "help",
        "new",
        "clear",
        "resume",
        "fork",
        "rewind",
        "undo",
        "tree",
        "label",
        "compact",
        "session",
        "context",
        "name",
        "copy",
        "export",
        "login",
        "logout",
        "mcp",
        "skills",
        "hotkeys",
        "trust",
        "permissions",
        "sandbox",
        "plan",
        "quit",
        "exit",
    ]
    assert registry.get("/compact") is not None
    assert registry.get("compact").argument_hint == "[--keep N] [instructions]"  # type: ignore[union-attr]


def test_complete_prefers_prefixes_then_names_containing_the_text() -> None:
    registry = CommandRegistry()
    assert [c.name for c in registry.complete("/co")] == ["compact", "context", "copy"]
    assert [c.name for c in registry.complete("t")] == ["thinking", "theme", "tree", "trust"]
    assert [c.name for c in registry.complete("ort")] == ["export"]
    assert [c.name for c in registry.complete("SES")] == ["session"]
    assert registry.complete("zz") == []


def test_extension_commands_are_added_and_checked() -> None:
    registry = CommandRegistry()
    handler = object()
    added = registry.add_extension_command("deploy", "Ship it", "<env>", handler)  # type: ignore[arg-type]
    assert added.source == "extension"
    assert [c.name for c in registry.complete("de")] == ["deploy"]
    assert registry.get("deploy") is added
    assert registry.complete("")[-1] is added  # after the built-ins
    with pytest.raises(ValueError, match="already exists"):
        registry.add_extension_command("model", "mine")
    with pytest.raises(ValueError, match="must start with a letter or digit"):
        registry.add_extension_command("/bad name", "nope")
    registry.remove("deploy")
    registry.remove("model")  # built-ins cannot be removed
    assert "deploy" not in registry and "model" in registry


def test_handlers_can_be_attached_later() -> None:
    registry = CommandRegistry()
    calls: list[str] = []
    registry.set_handler("quit", calls.append)
    command = registry.get("quit")
    assert command is not None and command.handler is not None
    command.handler("now")
    assert calls == ["now"]
    with pytest.raises(KeyError):
        registry.set_handler("nope", calls.append)


def test_parse_splits_name_and_argument_and_rejects_unknown_names() -> None:
    registry = CommandRegistry()
    parsed = registry.parse("  /compact keep the test plan\nand the API  ")
    assert parsed is not None
    assert parsed.command.name == "compact"
    assert parsed.argument == "keep the test plan\nand the API"
    no_argument = registry.parse("/new")
    assert no_argument is not None and no_argument.argument == ""
    assert registry.parse("hello /model") is None
    assert registry.parse("/usr/bin/env python") is None  # a path, not a command
    assert registry.parse("/ model") is None
    with pytest.raises(UnknownCommandError, match=r"Unknown command /nmae\. Did you mean /name"):
        registry.parse("/nmae x")


@pytest.mark.parametrize(
    ("typed", "ours"), [("approvals", "permissions"), ("status", "session"), ("cost", "session")]
)
def test_another_agents_name_for_a_command_names_picodes(typed: str, ours: str) -> None:
    registry = CommandRegistry()
    with pytest.raises(
        UnknownCommandError, match=rf"Unknown command /{typed}\. picode's is /{ours}\."
    ):
        registry.parse(f"/{typed}")
    # Every name it points to is a command picode has.
    from picode.tui.completion.commands import OTHER_AGENTS_NAMES

    assert all(registry.get(name) is not None for name in OTHER_AGENTS_NAMES.values())


def test_a_slash_word_that_is_no_command_and_no_existing_path_is_refused() -> None:
    registry = CommandRegistry()
    # A refused /fork followed by /compact once became this prompt and went to the model.
    with pytest.raises(UnknownCommandError, match=r"/fork/compact .*not sent"):
        registry.parse("/fork/compact")
    with pytest.raises(UnknownCommandError):
        registry.parse("/no/such/place is slow")
    assert registry.parse("/usr/bin is slow, why?") is None  # an existing path: a message


def test_custom_builtin_list() -> None:
    registry = CommandRegistry([SlashCommand("only", "The only one")])
    assert [c.usage for c in registry] == ["/only"]
    assert len(BUILTIN_COMMANDS) == 29


# --- triggers -----------------------------------------------------------------------------


def test_find_trigger_for_commands_and_files() -> None:
    command = find_trigger("/mo")
    assert command is not None and (command.kind, command.query, command.start) == (
        "command",
        "mo",
        0,
    )
    assert find_trigger("/model gpt") is None  # past the command word
    assert find_trigger("ask /mo") is None
    file = find_trigger("look at @src/ap")
    assert file is not None and (file.kind, file.query, file.start) == ("file", "src/ap", 8)
    at_line_start = find_trigger("first line\n@rea")
    assert at_line_start is not None and at_line_start.query == "rea"
    assert find_trigger("mail me@example.com") is None
    assert find_trigger("@done then more") is None
    empty = find_trigger("see @")
    assert empty is not None and empty.query == ""


def test_apply_completion_replaces_the_token() -> None:
    trigger = find_trigger("/co")
    assert trigger is not None
    assert apply_completion("/co", 3, trigger, "/compact") == ("/compact ", 9)
    text = "read @sr and tell me"
    trigger = find_trigger(text[:8])
    assert trigger is not None
    assert apply_completion(text, 8, trigger, "src/app.py") == (
        "read @src/app.py  and tell me",
        17,
    )
    # A folder keeps the cursor right after the slash so typing goes on inside it.
    assert apply_completion("@s", 2, find_trigger("@s"), "src/")[0] == "@src/"  # type: ignore[arg-type]
    # Mid-token: the rest of the token is replaced too; spaces get quotes.
    mid = find_trigger("@my")
    assert mid is not None
    assert apply_completion("@myfi", 3, mid, "my file.txt") == ('@"my file.txt" ', 15)


# --- fuzzy scoring ------------------------------------------------------------------------


def test_fuzzy_score_prefers_consecutive_and_word_starts() -> None:
    assert score("abc", "xyz") is None
    assert score("", "anything") == 0.0
    consecutive = score("son", "claude-sonnet")
    scattered = score("son", "s-o-n-x")
    assert consecutive is not None and scattered is not None and consecutive > scattered
    word_start = score("gm", "gpt-mini")
    middle = score("gm", "agama")
    assert word_start is not None and middle is not None and word_start > middle
    assert score("sonnet 4", "claude-sonnet-4-5") is not None  # every word must match
    assert score("sonnet 7", "claude-sonnet-4-5") is None
    assert rank("gp", ["gemini-pro", "gpt-5", "zzz"], key=str) == ["gpt-5", "gemini-pro"]
    assert rank("", ["b", "a"], key=str, limit=1) == ["b"]


# --- file index -------------------------------------------------------------------------


def _tree(root: Path, files: list[str]) -> None:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x", encoding="utf-8")


@needs_rg
def test_file_index_respects_gitignore_and_skips_dot_git(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        [
            "src/app.py",
            "src/util.py",
            "build/out.js",
            "debug.log",
            ".config/settings.toml",
            ".git/HEAD",
            ".git/objects/ab/cdef",
            "docs/guide.md",
        ],
    )
    (tmp_path / ".gitignore").write_text("build/\n*.log\n", encoding="utf-8")
    index = FileIndex(tmp_path)
    index.build_now()
    files = sorted(index.files())
    assert files == [
        ".config/settings.toml",
        ".gitignore",
        "docs/guide.md",
        "src/app.py",
        "src/util.py",
    ]
    assert "src/" in index.search("src")
    assert index.search("out.js") == []
    assert index.search("HEAD") == []


@needs_rg
def test_file_ranking_prefers_basenames_consecutive_and_short_paths(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        [
            "abc/readme.md",
            "x/abc.py",
            "src/tap.py",
            "src/t_a_p.py",
            "a/config.py",
            "a/b/c/config.py",
            "lib/README.md",
            "tests/test_app.py",
            "src/app.py",
            "a/p/p.txt",
        ],
    )
    index = FileIndex(tmp_path, include_dirs=False)
    index.build_now()
    # A basename match beats a match in a folder name.
    assert index.search("abc")[:2] == ["x/abc.py", "abc/readme.md"]
    # Consecutive characters beat scattered ones.
    assert index.search("tap")[:2] == ["src/tap.py", "src/t_a_p.py"]
    # Among equal matches, the shorter path wins.
    assert index.search("config") == ["a/config.py", "a/b/c/config.py"]
    # Case does not matter.
    assert sorted(index.search("readme")) == ["abc/readme.md", "lib/README.md"]
    ranked = index.search("app")
    assert ranked[0] == "src/app.py"
    assert ranked.index("tests/test_app.py") < ranked.index("a/p/p.txt")
    assert len(index.search("p", limit=3)) == 3
    assert index.search("") == index.search("", limit=20)[:20]
    assert index.search("", limit=2) == ["x/abc.py", "a/p/p.txt"]


@needs_rg
def test_file_search_scales_and_stops_early_on_a_large_tree(tmp_path: Path) -> None:
    names = [f"pkg{i % 40}/mod{i % 97}/file_{i}.py" for i in range(3000)]
    names.append("pkg1/target_module.py")
    _tree(tmp_path, names)
    index = FileIndex(tmp_path)
    index.build_now()
    assert len(index.files()) == 3001
    assert index.search("targmod")[0] == "pkg1/target_module.py"
    assert index.search("file_2999")[0] == "pkg39/mod89/file_2999.py"
    one_char = index.search("f", limit=5)
    assert len(one_char) == 5 and all("f" in path.lower() for path in one_char)


@needs_rg
def test_background_build_calls_back_and_refresh_sees_new_files(tmp_path: Path) -> None:
    _tree(tmp_path, ["one.py"])
    ready = threading.Event()
    index = FileIndex(tmp_path, on_ready=ready.set)
    assert index.search("one") == []  # starts the build
    assert ready.wait(10)
    assert index.ready and index.error is None
    assert index.search("one") == ["one.py"]
    _tree(tmp_path, ["two.py"])
    ready.clear()
    index.refresh()
    assert ready.wait(10)
    assert index.search("two") == ["two.py"]
    assert index.build_seconds is not None


def test_missing_ripgrep_is_reported(tmp_path: Path) -> None:
    index = FileIndex(tmp_path, rg=str(tmp_path / "no-such-rg"))
    with pytest.raises(FileIndexError, match="Cannot run"):
        index.build_now()
    index.refresh()
    assert index.wait(10)
    assert index.error is not None and "Cannot run" in index.error
    assert index.search("x") == []


@needs_rg
def test_file_index_caps_the_number_of_files(tmp_path: Path) -> None:
    _tree(tmp_path, [f"f{i}.txt" for i in range(50)])
    index = FileIndex(tmp_path, max_files=10, include_dirs=False)
    index.build_now()
    assert len(index.files()) == 10
    assert index.truncated


def test_rg_binary_is_found() -> None:
    found = find_rg()
    assert found is None or Path(found).name.startswith("rg")
    assert found is not None or shutil.which("rg") is None


# --- popup --------------------------------------------------------------------------------


def test_completion_popup_show_move_select_hide() -> None:
    popup = CompletionPopup()
    app = WidgetHost(popup)
    registry = CommandRegistry()

    async def scenario() -> None:
        async with app.run_test(size=(60, 20)) as pilot:
            assert not popup.is_open and popup.selected() is None
            popup.show([CompletionItem.for_command(c) for c in registry.complete("th")])
            await pilot.pause()
            assert popup.is_open and popup.display
            assert popup.selected() == CompletionItem(
                "/thinking",
                "/thinking [off|minimal|low|medium|high|xhigh]",
                "Set the thinking level",
            )
            popup.move(1)
            assert popup.selected() is not None and popup.selected().value == "/theme"  # type: ignore[union-attr]
            popup.move(1)  # wraps around
            assert popup.selected().value == "/thinking"  # type: ignore[union-attr]
            popup.move(-1)
            assert popup.selected().value == "/theme"  # type: ignore[union-attr]
            assert len(popup.items) == 2
            assert not popup.can_focus
            popup.show([])
            await pilot.pause()
            assert not popup.is_open and popup.selected() is None
            popup.show(["src/app.py", CompletionItem.for_path("src/")])
            assert popup.selected() == CompletionItem("src/app.py", "src/app.py")
            popup.hide()
            await wait_until(pilot, lambda: not popup.display)

    run(scenario())


def test_long_argument_hints_are_elided_so_descriptions_line_up() -> None:
    from picode.tui.completion.popup import LABEL_WIDTH, elide_label

    thinking = "/thinking [off|minimal|low|medium|high|xhigh]"
    assert elide_label(thinking, LABEL_WIDTH) == "/thinking [off|minimal|…]"
    assert elide_label("/compact [--keep N] [instructions]", LABEL_WIDTH) == "/compact [--keep N] …"
    assert elide_label("/model [provider/id]", LABEL_WIDTH) == "/model [provider/id]"
    for label in (thinking, "/a-very-long-command-name-without-hints"):
        assert len(elide_label(label, LABEL_WIDTH)) <= LABEL_WIDTH
