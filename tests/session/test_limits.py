"""``[limits]``: how far the agent goes on its own before it stops and waits for a message."""

from __future__ import annotations

from pathlib import Path

import pytest

from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.ai.types import AssistantMessage, ToolResultMessage
from picode.session.config.limits import LimitSettings, limit_reached
from picode.session.config.settings import Settings, load_config
from picode.session.events import Notice
from picode.session.paths import Paths

from .conftest import SessionHarness, run
from .test_config import write_project, write_user


def _ls_turns(count: int, usage: tuple[int, int] | None = None) -> list[object]:
    turns = [tool_turn(FauxToolCall("ls", {}), usage=usage) for _ in range(count)]
    return [*turns, text_turn("done")]


def _replies(session: object) -> list[AssistantMessage]:
    return [m for m in session.messages if isinstance(m, AssistantMessage)]  # type: ignore[attr-defined]


def test_max_turns_stops_the_run_and_says_so_and_the_next_message_goes_on(
    harness: SessionHarness,
) -> None:
    settings = Settings(limits=LimitSettings(max_turns=2))

    async def scenario() -> None:
        session = await harness.open(harness.faux(*_ls_turns(3)), settings=settings)
        await session.prompt("look around")
        assert len(_replies(session)) == 2 and not session.is_running
        assert isinstance(session.messages[-1], ToolResultMessage)
        (notice,) = [e for e in harness.of_type(Notice) if e.source == "limits"]
        assert notice.level == "warning"
        assert "Stopped after 2 model requests" in notice.text
        assert "max_turns = 2" in notice.text
        await session.prompt("go on")
        assert _replies(session)[-1].text == "done"
        await session.close()

    run(scenario())


def test_max_cost_stops_once_the_spend_since_your_message_reaches_it(
    harness: SessionHarness,
) -> None:
    # The faux model costs $3 a million input tokens: each reply here costs $3.
    settings = Settings(limits=LimitSettings(max_cost_usd=5))

    async def scenario() -> None:
        faux = harness.faux(*_ls_turns(4, usage=(1_000_000, 0)))
        session = await harness.open(faux, settings=settings)
        await session.prompt("look around")
        assert len(_replies(session)) == 2
        (notice,) = [e for e in harness.of_type(Notice) if e.source == "limits"]
        assert "$6.00 spent" in notice.text and "max_cost_usd = 5" in notice.text
        await session.close()

    run(scenario())


def test_no_limit_by_default() -> None:
    assert limit_reached(LimitSettings(), 10_000, []) is None


def test_a_project_may_lower_a_limit_but_not_lift_yours(paths: Paths, cwd: Path) -> None:
    write_user(paths, "[limits]\nmax_turns = 20\nmax_cost_usd = 2\n")
    write_project(cwd, "[limits]\nmax_turns = 0\nmax_cost_usd = 1\n")
    loaded = load_config(paths, cwd)
    assert loaded.settings.limits == LimitSettings(max_turns=20, max_cost_usd=1)
    assert [gate.loc for gate in loaded.ignored] == [("limits", "max_turns")]
    trusted = load_config(paths, cwd, project_trusted=True)
    assert trusted.settings.limits == LimitSettings(max_turns=0, max_cost_usd=1)


@pytest.mark.parametrize("text", ["max_turns = -1", "max_cost_usd = -0.5", "max_turns = 'ten'"])
def test_a_bad_limit_is_reported(paths: Paths, cwd: Path, text: str) -> None:
    write_user(paths, f"[limits]\n{text}\n")
    loaded = load_config(paths, cwd)
    assert any(problem.key and problem.key.startswith("limits") for problem in loaded.problems)


def test_the_session_says_its_limits(harness: SessionHarness) -> None:
    settings = Settings(limits=LimitSettings(max_turns=30, max_cost_usd=2.5))

    async def scenario() -> None:
        session = await harness.open(harness.faux(text_turn("hi")), settings=settings)
        assert session.run_limits == (30, 2.5)
        await session.close()

    run(scenario())
