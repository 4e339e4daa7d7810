"""One way to choose a model from a reference, for the launcher, /model and rpc set_model."""

from __future__ import annotations

from pathlib import Path

import pytest

from picode.ai.models import UnknownModelError, builtin_registry
from picode.session.events import ModelChanged, ThinkingLevelChanged
from picode.session.models.choice import choose_model
from picode.session.models.credentials import Credentials
from picode.session.paths import resolve_paths

from .conftest import SessionHarness, run


@pytest.fixture
def credentials(tmp_path: Path) -> Credentials:
    registry = builtin_registry()
    paths = resolve_paths({"PICODE_HOME": str(tmp_path)})
    return Credentials(registry, paths, env={"OPENAI_API_KEY": "k"})


def test_thinking_from_the_reference_is_kept_for_a_thinking_model(
    credentials: Credentials,
) -> None:
    choice = choose_model(credentials.registry, credentials, "openai/gpt-5:high")
    assert (choice.model.ref, choice.thinking, choice.warnings) == ("openai/gpt-5", "high", [])


def test_a_level_asked_apart_wins_over_the_reference(credentials: Credentials) -> None:
    choice = choose_model(credentials.registry, credentials, "openai/gpt-5:high", thinking="low")
    assert choice.thinking == "low"


def test_unknown_id_missing_key_and_clamped_thinking_are_all_said(
    credentials: Credentials,
) -> None:
    choice = choose_model(credentials.registry, credentials, "anthropic/claude-next:high")
    assert choice.model.ref == "anthropic/claude-next"
    text = "\n".join(choice.warnings)
    assert "No API key for anthropic: set ANTHROPIC_API_KEY" in text
    assert len(choice.warnings) >= 2  # the unknown id is warned about as well


def test_unknown_reference_raises(credentials: Credentials) -> None:
    with pytest.raises(UnknownModelError):
        choose_model(credentials.registry, credentials, "nobody/nothing")


def test_session_select_model_switches_and_records(harness: SessionHarness) -> None:
    faux = harness.faux()

    async def scenario() -> None:
        session = await harness.open(faux)
        choice = session.select_model("openai/gpt-5-mini:minimal")
        assert session.model.ref == "openai/gpt-5-mini"
        assert session.thinking == "minimal"
        assert choice.model is session.model
        await session.close()

    run(scenario())
    assert any(isinstance(e, ModelChanged) and e.model_id == "gpt-5-mini" for e in harness.events)
    assert any(isinstance(e, ThinkingLevelChanged) for e in harness.events)


def test_session_select_model_changes_nothing_on_an_unknown_ref(harness: SessionHarness) -> None:
    faux = harness.faux()

    async def scenario() -> None:
        session = await harness.open(faux)
        before = session.model.ref
        with pytest.raises(UnknownModelError):
            session.select_model("nobody/nothing")
        assert session.model.ref == before
        await session.close()

    run(scenario())
