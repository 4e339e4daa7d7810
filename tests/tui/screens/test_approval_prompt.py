"""The approval prompt: y / a / n + reason / Esc, and keys typed before it appeared."""

from __future__ import annotations

import asyncio
from typing import Any

from textual.widgets import Input, Static

from picode.session.safety.approval import ApprovalDecision, ApprovalRequest, preview_for
from picode.tui.approval import (
    ARM_DELAY_S,
    ApprovalPrompt,
    ask_approval,
    render_preview,
    title_for,
)
from tests.tui.conftest import FakeClock, run, wait_until
from tests.tui.hosts import WidgetHost


def bash_request() -> ApprovalRequest:
    args = {"command": "rm -rf build && make"}
    return ApprovalRequest("call-1", "bash", args, preview_for("bash", args))


def edit_request() -> ApprovalRequest:
    args = {"path": "app.py", "old_text": "x = 1\ny = 2", "new_text": "x = 10"}
    return ApprovalRequest("call-2", "edit", args, preview_for("edit", args))


class PromptHost(WidgetHost):
    def __init__(self, prompt: ApprovalPrompt) -> None:
        super().__init__(Input(id="editor"), prompt)
        self.prompt = prompt
        self.answers: list[ApprovalPrompt.Answered] = []

    def on_approval_prompt_answered(self, message: ApprovalPrompt.Answered) -> None:
        self.answers.append(message)


def _drive(body: Any, request: ApprovalRequest | None = None) -> tuple[PromptHost, FakeClock]:
    clock = FakeClock()
    prompt = ApprovalPrompt(request or bash_request(), clock=clock)
    app = PromptHost(prompt)

    async def scenario() -> None:
        async with app.run_test(size=(90, 20)) as pilot:
            prompt.focus()
            await wait_until(pilot, lambda: prompt.shown_at is not None, what="prompt drawn")
            asking = asyncio.ensure_future(prompt.ask())
            await body(app, prompt, pilot, clock, asking)

    run(scenario())
    return app, clock


async def _armed(pilot: Any, clock: FakeClock) -> None:
    clock.advance(ARM_DELAY_S)
    await pilot.pause()


def test_yes() -> None:
    async def body(
        app: PromptHost, prompt: ApprovalPrompt, pilot: Any, clock: Any, asking: Any
    ) -> None:
        await _armed(pilot, clock)
        await pilot.press("y")
        assert await asking == ApprovalDecision("yes")

    app, _ = _drive(body)
    assert [(m.decision.kind, m.aborted) for m in app.answers] == [("yes", False)]


def test_always() -> None:
    async def body(
        app: PromptHost, prompt: ApprovalPrompt, pilot: Any, clock: Any, asking: Any
    ) -> None:
        await _armed(pilot, clock)
        await pilot.press("a")
        assert await asking == ApprovalDecision("always")

    _drive(body)


def test_no_then_a_reason() -> None:
    async def body(
        app: PromptHost, prompt: ApprovalPrompt, pilot: Any, clock: Any, asking: Any
    ) -> None:
        await _armed(pilot, clock)
        await pilot.press("n")
        assert prompt.mode == "reason" and prompt.reason_input.has_focus
        assert not asking.done()
        await pilot.press(*"use make clean", "enter")
        assert await asking == ApprovalDecision("no", "use make clean")

    app, _ = _drive(body)
    assert app.answers[0].aborted is False


def test_no_without_a_reason() -> None:
    async def body(
        app: PromptHost, prompt: ApprovalPrompt, pilot: Any, clock: Any, asking: Any
    ) -> None:
        await _armed(pilot, clock)
        await pilot.press("n", "enter")
        assert await asking == ApprovalDecision("no", None)

    _drive(body)


def test_keys_typed_before_it_appeared_do_not_answer() -> None:
    async def body(
        app: PromptHost, prompt: ApprovalPrompt, pilot: Any, clock: Any, asking: Any
    ) -> None:
        await pilot.press("y", "a", "n")
        clock.advance(ARM_DELAY_S / 2)
        await pilot.press("y")
        assert not asking.done() and prompt.decision is None
        assert prompt.ignored_keys == 4 and prompt.mode == "choose"
        clock.advance(ARM_DELAY_S / 2)
        await pilot.press("a")
        assert await asking == ApprovalDecision("always")

    _drive(body)


def test_escape_denies_and_asks_to_abort() -> None:
    async def body(
        app: PromptHost, prompt: ApprovalPrompt, pilot: Any, clock: Any, asking: Any
    ) -> None:
        await _armed(pilot, clock)
        await pilot.press("escape")
        assert await asking == ApprovalDecision("no", None)
        assert prompt.aborted

    app, _ = _drive(body)
    assert [(m.decision.kind, m.aborted) for m in app.answers] == [("no", True)]


def test_escape_while_typing_a_reason_keeps_the_reason() -> None:
    async def body(
        app: PromptHost, prompt: ApprovalPrompt, pilot: Any, clock: Any, asking: Any
    ) -> None:
        await _armed(pilot, clock)
        await pilot.press("n", *"stop", "escape")
        assert await asking == ApprovalDecision("no", "stop")
        assert prompt.aborted

    _drive(body)


def test_later_keys_change_nothing() -> None:
    async def body(
        app: PromptHost, prompt: ApprovalPrompt, pilot: Any, clock: Any, asking: Any
    ) -> None:
        await _armed(pilot, clock)
        await pilot.press("y", "n", "escape")
        assert await asking == ApprovalDecision("yes")
        assert not prompt.aborted

    app, _ = _drive(body)
    assert len(app.answers) == 1


def test_ask_approval_mounts_waits_removes_and_gives_focus_back() -> None:
    clock = FakeClock()
    editor = Input(id="editor")
    app = WidgetHost(editor)

    async def scenario() -> None:
        async with app.run_test(size=(90, 20)) as pilot:
            editor.focus()
            asking = asyncio.ensure_future(ask_approval(app.screen, edit_request(), clock=clock))
            await wait_until(pilot, lambda: len(app.query(ApprovalPrompt)) == 1)
            prompt = app.query_one(ApprovalPrompt)
            await wait_until(pilot, lambda: prompt.shown_at is not None)
            await wait_until(pilot, lambda: prompt.has_focus)  # focus lands a frame later
            clock.advance(1)
            await pilot.press("y")
            assert await asking == ApprovalDecision("yes")
            await wait_until(pilot, lambda: len(app.query(ApprovalPrompt)) == 0)
            assert editor.has_focus

            # Cancelled from outside (the turn was aborted): the prompt goes away too.
            asking = asyncio.ensure_future(ask_approval(app.screen, bash_request(), clock=clock))
            await wait_until(pilot, lambda: len(app.query(ApprovalPrompt)) == 1)
            asking.cancel()
            await wait_until(pilot, lambda: len(app.query(ApprovalPrompt)) == 0)

    run(scenario())


def test_preview_colours_added_and_removed_lines() -> None:
    content = render_preview(edit_request())
    lines = content.plain.splitlines()
    assert lines == ["edit app.py", "-x = 1", "-y = 2", "+x = 10"]
    styles = {content.plain[s.start : s.end]: str(s.style) for s in content.spans}
    assert "diff-removed" in styles["-x = 1"]
    assert "diff-added" in styles["+x = 10"]
    bash = render_preview(bash_request())
    assert bash.plain == "$ rm -rf build && make"
    long = ApprovalRequest("c", "write", {}, "write a.txt (50 lines)\n" + "+line\n" * 50)
    assert render_preview(long, max_lines=5).plain.splitlines()[-1] == "… 46 more lines"


def test_preview_of_a_long_write_counts_every_hidden_line() -> None:
    content = "".join(f"line {i}\n" for i in range(3200))
    preview = preview_for("write", {"path": "big.txt", "content": content})
    request = ApprovalRequest("c", "write", {}, preview)
    shown = render_preview(request, max_lines=20).plain.splitlines()
    # 19 of the file's 3200 lines are shown under the title: the other 3181 are not.
    assert shown[-1] == "… 3181 more lines"
    assert len(shown) == 21


def test_a_subagents_question_says_which_subagent_asks() -> None:
    """Its description is the model's text: an escape in it is spelled out on screen."""
    args = {"command": "make"}
    asked = ApprovalRequest("c", "bash", args, preview_for("bash", args), origin="fix\x1b[2J it")

    async def body(app: PromptHost, prompt: ApprovalPrompt, pilot: Any, *_: Any) -> None:
        text = "\n".join(str(w.render()) for w in prompt.query(Static))
        assert "Subagent “fix␛[2J it”: Run this command?" in text
        assert "\x1b" not in text

    _drive(body, asked)
    assert title_for(bash_request()) == "Run this command?"
