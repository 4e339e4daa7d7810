"""A command the sandbox blocked, in the real app: the approval prompt asks once to run it
outside the sandbox, whatever the approval policy, and yes runs it there."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import pytest

from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.ai.types import ToolResultMessage
from picode.tools import SandboxConfig, coding_tools
from picode.tui.app import PicodeApp
from picode.tui.approval import ARM_DELAY_S, ApprovalPrompt
from picode.tui.config import TuiConfig
from tests.tui.conftest import SIZE, TuiHarness, has_notice, opened, run, send, wait_until

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="bubblewrap is the Linux sandbox"
)


def sandboxed_app(tui: TuiHarness, home: Path, *commands: str) -> PicodeApp:
    turns: list[Any] = [tool_turn(FauxToolCall("bash", {"command": c})) for c in commands]
    options = tui.options(tui.faux(*turns, text_turn("Done.")))
    tools = coding_tools(tui.cwd, sandbox=SandboxConfig(home=home))
    config = TuiConfig.from_options(dataclasses.replace(options, tools=tools))
    config.cwd_label = "~/project"
    config.clock = tui.clock
    config.warm_provider = False
    return PicodeApp(config)


async def _prompt(pilot: Any) -> ApprovalPrompt:
    app = pilot.app
    await wait_until(pilot, lambda: app.approvals.prompt is not None, what="the escalation")
    prompt = app.approvals.prompt
    await wait_until(pilot, lambda: prompt.shown_at is not None, what="the prompt drawn")
    return prompt


def _results(app: Any) -> list[ToolResultMessage]:
    return [m for m in app.session.messages if isinstance(m, ToolResultMessage)]


def test_a_blocked_command_asks_to_run_outside_and_yes_runs_it(tui: TuiHarness, home: Path) -> None:
    app = sandboxed_app(tui, home, "echo x > ~/x")

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            assert app.session.approval_policy == "never"
            await send(pilot, "write to home")
            prompt = await _prompt(pilot)
            title = str(prompt.query_one("#approval-title").render())
            assert "The sandbox blocked a write outside the writable folders" in title
            assert "outside" in title
            preview = str(prompt.query_one("#approval-preview").render())
            assert "echo x > ~/x" in preview
            keys = str(prompt.query_one("#approval-keys").render())
            assert "allow network for this session" in keys
            assert not (home / "x").exists()
            tui.clock.advance(ARM_DELAY_S)
            await pilot.press("y")
            await wait_until(pilot, lambda: not app.session.is_running)
            [result] = _results(app)
            assert not result.is_error
            assert "The user let it run outside the sandbox" in result.text
            assert not app.query(ApprovalPrompt)

    run(scenario())
    assert (home / "x").read_text() == "x\n"


def test_no_keeps_it_blocked(tui: TuiHarness, home: Path) -> None:
    app = sandboxed_app(tui, home, "echo x > ~/x")

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "write to home")
            await _prompt(pilot)
            tui.clock.advance(ARM_DELAY_S)
            await pilot.press("n", "enter")
            await wait_until(pilot, lambda: not app.session.is_running)
            [result] = _results(app)
            assert result.is_error
            assert "chose not to run it outside the sandbox" in result.text

    run(scenario())
    assert not (home / "x").exists()


def test_the_sandbox_command_shows_it_and_allows_the_network(tui: TuiHarness, home: Path) -> None:
    app = sandboxed_app(tui, home)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "/sandbox")
            await wait_until(pilot, lambda: has_notice(app, "network cut off"), what="status")
            await send(pilot, "/sandbox network on")
            await wait_until(pilot, lambda: has_notice(app, "network allowed"), what="allowed")
            assert app.session.sandbox_state == (True, True)
            await send(pilot, "/sandbox network off")
            await wait_until(pilot, lambda: app.session.sandbox_state == (True, False))

    run(scenario())
