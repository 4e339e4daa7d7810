"""A command the sandbox blocked: the session asks its escalator (the TUI) once, whatever
the approval policy; without one (headless modes) the result says what was blocked."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.ai.types import ToolResultMessage
from picode.session.safety.approval import ApprovalDecision, ApprovalRequest
from picode.tools import SandboxConfig, coding_tools
from tests.session.conftest import SessionHarness, run

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="bubblewrap is the Linux sandbox"
)


def sandboxed_tools(harness: SessionHarness, home: Path) -> list[object]:
    return list(coding_tools(harness.cwd, sandbox=SandboxConfig(home=home)))


def test_the_escalator_is_asked_and_yes_runs_the_command_outside(
    harness: SessionHarness, home: Path
) -> None:
    asked: list[ApprovalRequest] = []

    async def escalator(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision("yes")

    faux = harness.faux(
        tool_turn(FauxToolCall("bash", {"command": "echo x > ~/x"})), text_turn("done")
    )

    async def scenario() -> None:
        session = await harness.open(faux, tools=sandboxed_tools(harness, home))
        session.set_escalator(escalator)
        await session.prompt("go")
        [result] = [m for m in session.messages if isinstance(m, ToolResultMessage)]
        assert not result.is_error
        await session.close()

    run(scenario())
    [request] = asked
    assert request.tool_name == "bash"
    assert request.preview == "echo x > ~/x"
    assert request.escalation == "a write outside the writable folders"
    assert (home / "x").read_text() == "x\n"


def test_without_an_escalator_the_result_names_the_block(
    harness: SessionHarness, home: Path
) -> None:
    faux = harness.faux(
        tool_turn(FauxToolCall("bash", {"command": "echo x > ~/x"})), text_turn("done")
    )

    async def scenario() -> str:
        session = await harness.open(faux, tools=sandboxed_tools(harness, home))
        await session.prompt("go")
        [result] = [m for m in session.messages if isinstance(m, ToolResultMessage)]
        assert result.is_error
        await session.close()
        return result.text

    text = run(scenario())
    assert "The sandbox blocked a write outside the writable folders" in text
    assert "writable = [...] under [sandbox]" in text
    assert not (home / "x").exists()


def test_the_network_given_for_a_conversation_ends_with_it(
    harness: SessionHarness, home: Path
) -> None:
    faux = harness.faux(text_turn("hi"))

    async def scenario() -> None:
        session = await harness.open(faux, tools=sandboxed_tools(harness, home))
        assert session.sandbox_state == (True, False)
        session.allow_sandbox_network(True)
        assert session.sandbox_state == (True, True)
        await session.new_session()
        assert session.sandbox_state == (True, False)
        await session.close()

    run(scenario())
