"""Approval mode in the real app: the inline prompt above the editor, on a real session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual.containers import VerticalScroll
from textual.widgets import Static

from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.ai.types import ToolResultMessage
from picode.session.config.settings import Settings
from picode.tui.approval import ARM_DELAY_S, ApprovalPrompt
from picode.tui.widgets.tool_call import ToolCallView
from tests.tui.conftest import SIZE, TuiHarness, has_notice, opened, run, send, wait_until

ALL = Settings(approval="all")


def _bash_turns(*commands: str) -> list[Any]:
    turns: list[Any] = [tool_turn(FauxToolCall("bash", {"command": c})) for c in commands]
    return [*turns, text_turn("Done.")]


async def _prompt(pilot: Any) -> ApprovalPrompt:
    app = pilot.app
    await wait_until(pilot, lambda: app.approvals.prompt is not None, what="the approval prompt")
    prompt = app.approvals.prompt
    await wait_until(pilot, lambda: prompt.shown_at is not None, what="the prompt drawn")
    return prompt


def _results(app: Any) -> list[ToolResultMessage]:
    return [m for m in app.session.messages if isinstance(m, ToolResultMessage)]


def test_yes_runs_the_call_and_keys_typed_before_the_prompt_armed_are_ignored(
    tui: TuiHarness,
) -> None:
    app = tui.app(tui.faux(*_bash_turns("echo approved")), settings=ALL)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "run it")
            prompt = await _prompt(pilot)
            assert app.focused is prompt
            assert prompt.region.bottom <= app.editor.region.y  # above the editor
            (call,) = app.query(ToolCallView)
            assert "waiting for approval" in call.header_text
            assert "running" not in call.header_text
            await pilot.press("y")  # too early: meant for the editor, not an answer
            assert prompt.decision is None and prompt.ignored_keys == 1
            tui.clock.advance(ARM_DELAY_S)
            await pilot.press("y")
            await wait_until(pilot, lambda: not app.session.is_running)
            assert "approved" in _results(app)[0].text
            assert "waiting" not in call.header_text and call.state == "success"
            assert app.focused is app.editor
            assert not app.query(ApprovalPrompt)

    run(scenario())


def test_no_with_a_reason_denies_the_call(tui: TuiHarness) -> None:
    app = tui.app(tui.faux(*_bash_turns("rm -rf build")), settings=ALL)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "clean up")
            await _prompt(pilot)
            tui.clock.advance(ARM_DELAY_S)
            await pilot.press("n", *"keep it", "enter")
            await wait_until(pilot, lambda: not app.session.is_running)
            result = _results(app)[0]
            assert result.is_error
            assert result.text == "The user denied this bash call: keep it"

    run(scenario())


def test_always_stops_asking_for_that_tool(tui: TuiHarness) -> None:
    app = tui.app(tui.faux(*_bash_turns("echo one", "echo two")), settings=ALL)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "twice")
            await _prompt(pilot)
            tui.clock.advance(ARM_DELAY_S)
            await pilot.press("a")
            await wait_until(pilot, lambda: not app.session.is_running)
            assert [r.text.strip() for r in _results(app)] == ["one", "two"]

    run(scenario())


def test_esc_denies_and_stops_the_turn_and_app_keys_stay_quiet(tui: TuiHarness) -> None:
    app = tui.app(tui.faux(*_bash_turns("make deploy")), settings=ALL)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "deploy")
            prompt = await _prompt(pilot)
            thinking = app.session.thinking
            await pilot.press("shift+tab", "ctrl+t", "ctrl+c")
            assert app.session.thinking == thinking
            assert not app.transcript.thinking_collapsed
            assert prompt.decision is None
            await pilot.press("escape")  # armed or not, Esc answers
            await wait_until(pilot, lambda: not app.session.is_running)
            assert prompt.aborted
            assert _results(app)[0].is_error
            assert has_notice(app, "Interrupted")

    run(scenario())


def test_policy_never_asks_nothing(tui: TuiHarness) -> None:
    app = tui.app(tui.faux(*_bash_turns("echo free")))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "go")
            await wait_until(pilot, lambda: not app.session.is_running and _results(app))
            assert "free" in _results(app)[0].text
            assert not app.query(ApprovalPrompt)

    run(scenario())


SPOOF = "echo HIDDEN-PAYLOAD-RAN > hidden_ran.txt\r\x1b[2K\x1b[1Als -la"
SPOOF_SHOWN = "echo HIDDEN-PAYLOAD-RAN > hidden_ran.txt\\r␛[2K␛[1Als -la"


def _preview_text(prompt: ApprovalPrompt) -> str:
    return str(prompt.query_one("#approval-preview", Static).content)


def test_the_spoofed_command_is_shown_whole_in_the_prompt_and_the_transcript(
    tui: TuiHarness,
) -> None:
    app = tui.app(tui.faux(*_bash_turns(SPOOF)), settings=ALL)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "list files")
            prompt = await _prompt(pilot)
            assert _preview_text(prompt) == f"$ {SPOOF_SHOWN}"
            (call,) = app.query(ToolCallView)
            assert SPOOF_SHOWN in call.header_text
            tui.clock.advance(ARM_DELAY_S)
            await pilot.press("n", "enter")
            await wait_until(pilot, lambda: not app.session.is_running)
            assert not (tui.cwd / "hidden_ran.txt").exists()

    run(scenario())


def test_a_300_line_command_scrolls_and_the_choices_stay_on_screen(tui: TuiHarness) -> None:
    command = "\n".join(f"echo line {i}" for i in range(300))
    app = tui.app(tui.faux(*_bash_turns(command)), settings=ALL)

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await opened(pilot)
            await send(pilot, "long one")
            prompt = await _prompt(pilot)
            await pilot.pause()
            keys = prompt.query_one("#approval-keys", Static)
            screen = app.screen.region
            assert keys.region.height >= 1 and screen.contains_region(keys.region)
            assert "yes" in str(keys.content) and "no, and stop" in str(keys.content)
            scroll = prompt.query_one("#approval-scroll", VerticalScroll)
            assert scroll.region.height <= 12 and scroll.max_scroll_y > 250
            # Every line is there to scroll to: nothing of what runs is left out.
            assert "echo line 299" in _preview_text(prompt)
            await pilot.press("end")
            assert scroll.scroll_y == scroll.max_scroll_y
            assert screen.contains_region(keys.region)

    run(scenario())


def test_policy_never_still_asks_before_writing_the_projects_picode_folder(
    tui: TuiHarness,
) -> None:
    call = FauxToolCall("write", {"path": ".picode/extensions/x.py", "content": "import os\n"})
    app = tui.app(tui.faux(tool_turn(call), text_turn("Done.")))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "plant it")
            prompt = await _prompt(pilot)
            title = str(prompt.query_one("#approval-title", Static).content)
            assert "this project's .picode folder" in title
            tui.clock.advance(ARM_DELAY_S)
            await pilot.press("n", "enter")
            await wait_until(pilot, lambda: not app.session.is_running)
            assert _results(app)[0].is_error
            assert not (tui.cwd / ".picode").exists()

    run(scenario())


def test_always_says_which_commands_it_covers_and_holds_for_those_only(
    tui: TuiHarness,
) -> None:
    app = tui.app(tui.faux(*_bash_turns("git status", "git status -s", "git log")), settings=ALL)

    async def scenario() -> None:
        async with app.run_test(size=(140, 30)) as pilot:
            await opened(pilot)
            await send(pilot, "look")
            prompt = await _prompt(pilot)
            keys = str(prompt.query_one("#approval-keys", Static).content)
            assert "always for commands starting with `git status` (this session)" in keys
            tui.clock.advance(ARM_DELAY_S)
            await pilot.press("a")
            # `git status -s` is covered; `git log` is asked about.
            await wait_until(pilot, lambda: len(_results(app)) == 2, what="two commands run")
            prompt = await _prompt(pilot)
            assert "git log" in _preview_text(prompt)
            tui.clock.advance(ARM_DELAY_S)
            await pilot.press("y")
            await wait_until(pilot, lambda: not app.session.is_running, what="the end")
            assert len(_results(app)) == 3

    run(scenario())


def test_permissions_lists_what_always_covers_and_clear_asks_again(tui: TuiHarness) -> None:
    app = tui.app(tui.faux(*_bash_turns("git status", "git status")), settings=ALL)

    async def scenario() -> None:
        async with app.run_test(size=(140, 30)) as pilot:
            session = (await opened(pilot)).session
            assert session is not None
            await send(pilot, "/permissions")
            await wait_until(pilot, lambda: _info_text(app) is not None)
            assert "nothing yet" in _info_text(app)  # type: ignore[operator]
            await send(pilot, "look")
            await _prompt(pilot)
            tui.clock.advance(ARM_DELAY_S)
            await pilot.press("a")
            await wait_until(pilot, lambda: not session.is_running, what="the end")
            assert session.approvals_granted == ["commands starting with `git status`"]
            await send(pilot, "/permissions")
            await wait_until(pilot, lambda: "git status" in (_info_text(app) or ""))
            assert "ask before edits and commands" in (_info_text(app) or "")
            assert "Limits" in (_info_text(app) or "") and "none" in (_info_text(app) or "")
            await send(pilot, "/permissions clear")
            await wait_until(pilot, lambda: has_notice(app, "picode asks again"))
            assert session.approvals_granted == []

    run(scenario())


def test_p_saves_the_command_for_the_folder_and_permissions_forget_takes_it_back(
    tui: TuiHarness,
) -> None:
    app = tui.app(tui.faux(*_bash_turns("git status", "git status -s")), settings=ALL)
    saved_file = tui.paths.data_dir / "approved-commands.json"

    async def scenario() -> None:
        async with app.run_test(size=(140, 30)) as pilot:
            session = (await opened(pilot)).session
            assert session is not None
            await send(pilot, "look")
            prompt = await _prompt(pilot)
            keys = prompt.query_one("#approval-keys", Static).render()
            assert "p the same, saved for this folder" in str(keys)
            tui.clock.advance(ARM_DELAY_S)
            await pilot.press("p")
            await wait_until(pilot, lambda: not session.is_running, what="the end")
            assert len(_results(app)) == 2  # `git status -s` ran unasked
            assert str(tui.cwd.resolve()) in saved_file.read_text(encoding="utf-8")
            await send(pilot, "/permissions")
            await wait_until(pilot, lambda: "This folder" in (_info_text(app) or ""))
            text = _info_text(app) or ""
            assert "This folder commands starting with `git status`" in " ".join(text.split())
            await send(pilot, "/permissions forget")
            await wait_until(pilot, lambda: has_notice(app, "1 saved approval of this folder"))
            assert session.approvals_saved == ([], None)
            await send(pilot, "/permissions nonsense")
            await wait_until(pilot, lambda: has_notice(app, "/permissions forget."))
            await send(pilot, "/permissions allow npm run test")
            await wait_until(pilot, lambda: has_notice(app, "Saved for this folder"))
            assert session.approvals_saved == (["commands starting with `npm run test`"], None)
            await send(pilot, "/permissions allow npm test; curl x")
            await wait_until(pilot, lambda: has_notice(app, "is not a command's first words"))
            assert len(session.approvals_saved[0]) == 1

    run(scenario())


def test_p_means_nothing_where_nothing_can_be_saved(tui: TuiHarness) -> None:
    faux = tui.faux(
        tool_turn(FauxToolCall("write", {"path": "a.txt", "content": "a"})), text_turn("Done.")
    )
    app = tui.app(faux, settings=ALL)

    async def scenario() -> None:
        async with app.run_test(size=(140, 30)) as pilot:
            await opened(pilot)
            await send(pilot, "write it")
            prompt = await _prompt(pilot)
            assert "saved for this folder" not in str(
                prompt.query_one("#approval-keys", Static).render()
            )
            tui.clock.advance(ARM_DELAY_S)
            await pilot.press("p")
            assert prompt.decision is None  # not an answer here
            await pilot.press("y")
            await wait_until(pilot, lambda: not app.session.is_running, what="the end")
            assert not (tui.paths.data_dir / "approved-commands.json").exists()

    run(scenario())


def test_a_question_claude_codes_ask_rule_insists_on_offers_no_always(tui: TuiHarness) -> None:
    settings = Path.home() / ".claude" / "settings.json"  # the harness's own HOME
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"permissions": {"ask": ["Bash(rm *)"]}}), encoding="utf-8")
    app = tui.app(tui.faux(*_bash_turns("rm -f a.tmp")))  # approval "never": asked anyway

    async def scenario() -> None:
        async with app.run_test(size=(140, 30)) as pilot:
            await opened(pilot)
            await send(pilot, "clean")
            prompt = await _prompt(pilot)
            keys = str(prompt.query_one("#approval-keys", Static).render())
            assert "always" not in keys and "saved for this folder" not in keys
            title = str(prompt.query_one("#approval-title", Static).render())
            assert "Claude Code's permissions.ask (Bash(rm *)) asks each time" in title
            tui.clock.advance(ARM_DELAY_S)
            await pilot.press("a")
            assert prompt.decision is None  # not an answer here
            await pilot.press("y")
            await wait_until(pilot, lambda: not app.session.is_running, what="the end")

    run(scenario())


def _info_text(app: Any) -> str | None:
    from picode.tui.widgets.info import InfoView

    views = [view for view in app.query(InfoView) if view.title_text == "Permissions"]
    return views[-1].plain if views else None
