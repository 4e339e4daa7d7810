"""/rewind, /undo, /tree and /label in the real app: pickers, what they show, what they do."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.tui.app import PicodeApp
from picode.tui.pickers.choice_picker import ChoicePicker
from picode.tui.pickers.rewind_picker import RewindPicker
from picode.tui.pickers.tree_picker import TreePicker
from tests.tui.conftest import (
    SIZE,
    TuiHarness,
    has_notice,
    opened,
    run,
    screen_of,
    send,
    wait_until,
)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="checkpoints need git")

CHANGE = "sed -i s/old/new/ notes.txt && echo made > made.txt"


async def _turn(pilot: Any, app: PicodeApp, text: str) -> None:
    count = len(app.session.messages)
    await send(pilot, text)
    await wait_until(
        pilot,
        lambda: len(app.session.messages) > count + 1 and not app.session.is_running,
        what=f"the turn of {text!r}",
    )


def test_rewind_shows_the_changes_and_restores_code_and_conversation(tui: TuiHarness) -> None:
    (tui.cwd / "notes.txt").write_text("old\n", encoding="utf-8")
    faux = tui.faux(
        text_turn("Hello."),
        tool_turn(FauxToolCall("bash", {"command": CHANGE})),
        text_turn("Done."),
    )
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "/rewind")
            await wait_until(pilot, lambda: has_notice(app, "Nothing to rewind yet"))
            await pilot.press("ctrl+c")
            await _turn(pilot, app, "hi")
            await _turn(pilot, app, "change the notes")
            assert (tui.cwd / "made.txt").exists()
            await send(pilot, "/rewind")
            picker: RewindPicker = await screen_of(pilot, RewindPicker)
            assert [c.text for c in picker.matches] == ["change the notes", "hi"]
            await pilot.press("enter")
            choice: ChoicePicker[Any] = await screen_of(pilot, ChoicePicker)
            summary = str(choice.title_label.render())
            assert "M notes.txt  +1 −1" in summary and "D made.txt" in summary
            assert choice.matches[0].label == "Restore code and conversation"
            await pilot.press("enter")
            await wait_until(pilot, lambda: app.editor.text == "change the notes")
            assert (tui.cwd / "notes.txt").read_text(encoding="utf-8") == "old\n"
            assert not (tui.cwd / "made.txt").exists()
            assert [m.text for m in app.session.messages] == ["hi", "Hello."]
            assert has_notice(app, "Wrote back 1 file(s) and removed 1.")

    run(scenario())


def test_undo_takes_back_the_last_message_at_once(tui: TuiHarness) -> None:
    (tui.cwd / "notes.txt").write_text("old\n", encoding="utf-8")
    faux = tui.faux(tool_turn(FauxToolCall("bash", {"command": CHANGE})), text_turn("Done."))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await _turn(pilot, app, "change the notes")
            await send(pilot, "/undo")
            await wait_until(pilot, lambda: app.editor.text == "change the notes")
            assert (tui.cwd / "notes.txt").read_text(encoding="utf-8") == "old\n"
            assert list(app.session.messages) == []

    run(scenario())


def test_tree_moves_in_place_and_label_names_the_point(tui: TuiHarness) -> None:
    faux = tui.faux(text_turn("One."), text_turn("Two."), text_turn("Other."))
    app = tui.app(faux)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await _turn(pilot, app, "first")
            await _turn(pilot, app, "second")
            await send(pilot, "/tree")
            tree: TreePicker = await screen_of(pilot, TreePicker)
            assert [n.text for n in tree.matches] == ["first", "One.", "second", "Two."]
            assert tree.highlighted_item is not None and tree.highlighted_item.text == "Two."
            await pilot.press("up", "up")  # to "One."
            await pilot.press("enter")
            choice: ChoicePicker[Any] = await screen_of(pilot, ChoicePicker)
            assert [c.summarize for c in choice.matches] == [False, True]
            await pilot.press("enter")
            await wait_until(
                pilot, lambda: [m.text for m in app.session.messages] == ["first", "One."]
            )
            await _turn(pilot, app, "another way")
            await send(pilot, "/label my branch")
            await wait_until(pilot, lambda: has_notice(app, "Labelled “my branch”"))
            await send(pilot, "/tree")
            tree = await screen_of(pilot, TreePicker)
            assert "2 branches" in tree.title_text
            current = tree.highlighted_item
            assert current is not None and (current.text, current.label) == ("Other.", "my branch")
            await pilot.press("escape")

    run(scenario())


def test_esc_esc_on_an_empty_editor_opens_rewind(tui: TuiHarness) -> None:
    app = tui.app(tui.faux(text_turn("One.")))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await _turn(pilot, app, "first")
            await pilot.press("x", "escape", "escape")  # text typed: Esc leaves it alone
            assert app.editor.text == "x" and not isinstance(app.screen, RewindPicker)
            await pilot.press("backspace", "escape", "escape")
            picker: RewindPicker = await screen_of(pilot, RewindPicker)
            assert [c.text for c in picker.matches] == ["first"]
            await pilot.press("escape")
            await wait_until(pilot, lambda: not isinstance(app.screen, RewindPicker))

    run(scenario())


def test_what_a_rewind_would_do_reaches_the_terminal_escaped() -> None:
    from picode.session.rewinding import RewindPlan
    from picode.tui.pickers.rewind_picker import plan_lines

    plan = RewindPlan("m1", "hi", None, code_unavailable="git failed: \x1b]0;pwned\x07 \x1b[2J")
    (line,) = plan_lines(plan)
    assert "\x1b" not in line and "\x07" not in line
    assert line.startswith("The code cannot be restored: git failed:")
