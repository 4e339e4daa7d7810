"""``/permissions``' lines: every source of "runs unasked", escaped, and the run limits."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from picode.ai.models import ModelCost
from picode.tui.controllers.permissions_command import permissions_lines


@dataclass
class FakeModel:
    ref: str = "local/qwen3"
    cost: ModelCost = field(default_factory=ModelCost)


@dataclass
class FakeSession:
    mode: str = "all"
    approvals_granted: list[str] = field(default_factory=list)
    approvals_saved: tuple[list[str], str | None] = ([], None)
    approvals_configured: list[tuple[str, str]] = field(default_factory=list)
    sandbox_state: tuple[bool, bool] | None = (True, False)
    run_limits: tuple[int, float] = (0, 0.0)
    model: FakeModel = field(default_factory=FakeModel)


def _text(session: Any) -> str:
    return "\n".join(
        f"{line[0]}|{line[1]}" if isinstance(line, tuple) else line
        for line in permissions_lines(session)
    )


def test_repeated_sources_are_labelled_once_and_what_the_model_wrote_is_escaped() -> None:
    session = FakeSession(
        approvals_granted=["commands starting with `git diff`", "the command `a\x1b[2Jb`"],
        approvals_configured=[("Claude Code", "Bash(ls:*) (x)"), ("Claude Code", "Bash(y)")],
    )
    text = _text(session)
    assert "Always|commands starting with `git diff`" in text
    assert "|the command `a␛[2Jb`" in text and "\x1b" not in text
    assert text.count("Claude Code|") == 1 and "|Bash(y)" in text
    assert "This folder|nothing saved" in text
    assert "Limits|none" in text


def test_a_dollar_limit_on_a_model_without_prices_says_it_never_adds_up() -> None:
    text = _text(FakeSession(run_limits=(25, 2.0)))
    assert "stops after 25 model requests or $2.00 in a row" in text
    assert "local/qwen3 has no prices" in text
    priced = FakeSession(run_limits=(0, 2.0), model=FakeModel(cost=ModelCost(input=3, output=15)))
    assert "no prices" not in _text(priced)
