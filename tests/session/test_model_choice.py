"""One way to choose a model from a reference, for the launcher, /model and rpc set_model."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from picode.ai.models import UnknownModelError, builtin_registry
from picode.session.config.providers import apply_providers
from picode.session.config.settings import Settings, load_config
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
        choice = await session.select_model("openai/gpt-5.4-mini:low")
        assert session.model.ref == "openai/gpt-5.4-mini"
        assert session.thinking == "low"
        assert choice.model is session.model
        await session.close()

    run(scenario())
    assert any(isinstance(e, ModelChanged) and e.model_id == "gpt-5.4-mini" for e in harness.events)
    assert any(isinstance(e, ThinkingLevelChanged) for e in harness.events)


def test_session_select_model_changes_nothing_on_an_unknown_ref(harness: SessionHarness) -> None:
    faux = harness.faux()

    async def scenario() -> None:
        session = await harness.open(faux)
        before = session.model.ref
        with pytest.raises(UnknownModelError):
            await session.select_model("nobody/nothing")
        assert session.model.ref == before
        await session.close()

    run(scenario())


def test_a_model_only_its_server_knows_is_looked_up_off_the_event_loop(
    harness: SessionHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.wire.server import Pause, WireServer, json_response

    wire = WireServer().start()
    listing = json_response(200, {"data": [{"id": "Qwen/Qwen3-8B", "max_model_len": 32768}]})
    listing.body.insert(0, Pause(0.5))  # a slow server: the TUI must keep drawing meanwhile
    listing.chunked = True  # (pauses take effect between chunks)
    wire.enqueue(listing)
    monkeypatch.setenv("VLLM_BASE_URL", wire.url + "/v1")
    faux = harness.faux()
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    async def scenario() -> None:
        session = await harness.open(faux)
        ticking = asyncio.create_task(tick())
        choice = await session.select_model("vllm/Qwen/Qwen3-8B")
        ticking.cancel()
        assert choice.model.context_window == 32768
        assert session.model.ref == "vllm/Qwen/Qwen3-8B"
        await session.close()

    try:
        run(scenario())
    finally:
        wire.stop()
    # Blocked, the loop would have ticked once; free, it ticked all through the half second.
    assert ticks >= 10


def test_enabled_models_limits_what_cycling_goes_through(
    harness: SessionHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    async def body() -> tuple[set[str], set[str]]:
        faux = harness.faux()
        settings = Settings(enabled_models=["sonnet", "OpenAI/GPT-5.4*"])
        session = await harness.open(faux, settings=settings)
        keyed = {m.ref for m in session.available_models()}
        seen = {session.cycle_model().ref for _ in range(len(keyed) + 1)}
        await session.close()
        return keyed, seen

    keyed, seen = run(body())
    sonnet = builtin_registry().aliases["sonnet"]
    wanted = {ref for ref in keyed if ref == sonnet or ref.startswith("openai/gpt-5.4")}
    assert sonnet in wanted and len(wanted) > 2
    assert seen == wanted


def test_session_model_takes_an_alias(harness: SessionHarness) -> None:
    faux = harness.faux()

    async def scenario() -> None:
        session = await harness.open(faux)
        await session.select_model("sonnet:low")
        assert session.model.ref == builtin_registry().aliases["sonnet"]
        assert session.thinking == "low"
        await session.close()

    run(scenario())


def test_model_aliases_in_config_add_names_and_replace_built_in_ones() -> None:
    registry = builtin_registry()
    settings = Settings(
        model_aliases={"Fast": "anthropic/claude-haiku-4-5", "sonnet": "openai/gpt-5.4-mini"}
    )
    apply_providers(registry, settings)

    assert registry.resolve("fast").model.ref == "anthropic/claude-haiku-4-5"
    assert registry.resolve("sonnet").model.ref == "openai/gpt-5.4-mini"


def test_an_alias_naming_no_provider_is_reported_and_dropped(tmp_path: Path) -> None:
    paths = resolve_paths({"PICODE_HOME": str(tmp_path / "home")})
    paths.config_dir.mkdir(parents=True)
    paths.user_config_file.write_text(
        '[model_aliases]\nloop = "loop"\nok = "openai/gpt-5.4-mini"\n', encoding="utf-8"
    )

    loaded = load_config(paths, tmp_path)

    assert loaded.settings.model_aliases == {"ok": "openai/gpt-5.4-mini"}
    assert any("model_aliases" in str(problem) for problem in loaded.problems)
