"""The packaged model registry, model references, cost and thinking levels (SPEC §3.6)."""

from __future__ import annotations

import pytest

from picode.ai.models import (
    APIS,
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_MAX_TOKENS,
    THINKING_LEVELS,
    Model,
    ModelCost,
    ModelRegistry,
    ProviderInfo,
    UnknownModelError,
    builtin_registry,
    calculate_cost,
    next_thinking_level,
    reasoning_effort,
    thinking_budget,
    with_base_url,
)
from picode.ai.types import Usage


@pytest.fixture
def registry() -> ModelRegistry:
    return builtin_registry()


def _model(api: str, *, reasoning: bool = True, max_tokens: int = 64_000) -> Model:
    return Model(
        id="m", name="M", api=api, provider="p", reasoning=reasoning, max_tokens=max_tokens
    )


def test_the_packaged_registry_covers_the_major_providers(registry: ModelRegistry) -> None:
    assert {"anthropic", "openai", "google"} <= set(registry.providers)
    # The presets (test_presets.py) may have no models until the registry lists them.
    for name in ("anthropic", "openai", "google"):
        info = registry.providers[name]
        assert info.api in APIS, name
        assert info.api_key_env, name
        assert registry.models(name), f"{name} has no models"
        assert info.default_model is not None
        assert registry.get(name, info.default_model) is not None, name


def test_every_packaged_model_has_prices_and_limits(registry: ModelRegistry) -> None:
    models = registry.models()
    assert len(models) >= 10
    for model in models:
        assert model.api in APIS, model.ref
        assert model.known
        assert model.name
        assert model.base_url, model.ref
        assert model.context_window >= 100_000, model.ref
        assert 0 < model.max_tokens <= model.context_window, model.ref
        assert model.cost.input > 0 and model.cost.output > 0, model.ref
        assert model.cost.output >= model.cost.input, model.ref
        assert 0 <= model.cost.cache_read <= model.cost.input, model.ref
        assert model.cost.cache_write >= 0, model.ref
        assert "text" in model.input, model.ref


def test_model_refs_are_unique(registry: ModelRegistry) -> None:
    refs = [m.ref for m in registry.models()]
    assert len(refs) == len(set(refs))


def test_builtin_registry_is_fresh_each_time() -> None:
    first = builtin_registry()
    first.add_model(Model(id="custom", name="c", api="openai-completions", provider="anthropic"))
    assert builtin_registry().get("anthropic", "custom") is None


def test_cost_uses_prices_per_million_for_each_kind() -> None:
    model = Model(
        id="m",
        name="m",
        api="anthropic-messages",
        provider="p",
        cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75),
    )
    usage = Usage(input=1_000_000, output=200_000, cache_read=500_000, cache_write=100_000)
    cost = calculate_cost(model, usage)
    assert cost is usage.cost
    assert cost.input == pytest.approx(3.0)
    assert cost.output == pytest.approx(3.0)
    assert cost.cache_read == pytest.approx(0.15)
    assert cost.cache_write == pytest.approx(0.375)
    assert cost.total == pytest.approx(6.525)


def test_cost_of_a_free_model_is_zero() -> None:
    usage = Usage(input=10, output=10)
    assert calculate_cost(_model("openai-completions"), usage).total == 0


# --- resolving references ---------------------------------------------------------------------


def test_resolve_provider_slash_id(registry: ModelRegistry) -> None:
    resolved = registry.resolve("anthropic/claude-sonnet-4-5")
    assert resolved.model.ref == "anthropic/claude-sonnet-4-5"
    assert resolved.model.api == "anthropic-messages"
    assert resolved.thinking is None
    assert resolved.warning is None


@pytest.mark.parametrize("level", THINKING_LEVELS)
def test_resolve_with_a_thinking_suffix(registry: ModelRegistry, level: str) -> None:
    resolved = registry.resolve(f"openai/gpt-5:{level}")
    assert resolved.model.ref == "openai/gpt-5"
    assert resolved.thinking == level


def test_a_colon_that_is_not_a_thinking_level_stays_in_the_id(registry: ModelRegistry) -> None:
    resolved = registry.resolve("openai/ft:gpt-5:my-org")
    assert resolved.model.id == "ft:gpt-5:my-org"
    assert resolved.thinking is None
    assert not resolved.model.known


def test_resolve_a_bare_id_that_one_provider_knows(registry: ModelRegistry) -> None:
    resolved = registry.resolve(" gemini-2.5-pro:low ")
    assert resolved.model.ref == "google/gemini-2.5-pro"
    assert resolved.thinking == "low"


def test_an_ambiguous_bare_id_lists_the_choices(registry: ModelRegistry) -> None:
    registry.add_provider(ProviderInfo("openrouter", "openai-completions", "http://x"))
    registry.add_model(Model(id="gpt-5", name="x", api="openai-completions", provider="openrouter"))
    with pytest.raises(UnknownModelError, match="ambiguous") as info:
        registry.resolve("gpt-5")
    assert "openai/gpt-5" in str(info.value)
    assert "openrouter/gpt-5" in str(info.value)


def test_an_unknown_bare_id_suggests_close_matches(registry: ModelRegistry) -> None:
    with pytest.raises(UnknownModelError) as info:
        registry.resolve("claude-sonet-4-5")
    text = str(info.value)
    assert "Unknown model 'claude-sonet-4-5'" in text
    assert "anthropic/claude-sonnet-4-5" in text
    known = text.split("Known providers: ", 1)[1].split(". ", 1)[0].split(", ")
    assert {"anthropic", "google", "openai", "ollama"} <= set(known)
    assert known == sorted(known)


def test_an_unknown_provider_lists_close_matches_and_known_providers(
    registry: ModelRegistry,
) -> None:
    with pytest.raises(UnknownModelError) as info:
        registry.resolve("antropic/claude-sonnet-4-5:high")
    text = str(info.value)
    assert "Unknown provider 'antropic'" in text
    assert "Close matches: anthropic/claude-sonnet-4-5" in text  # the id under the provider meant
    known = text.split("Known providers: ", 1)[1].split(". ", 1)[0].split(", ")
    assert {"anthropic", "google", "openai", "ollama"} <= set(known)
    assert known == sorted(known)
    assert "provider/id" in text
    assert "--model" not in text  # the TUI's /model says it too: no command-line advice
    with pytest.raises(UnknownModelError) as other:
        registry.resolve("nope/x")
    assert "…" not in str(other.value)


def test_a_provider_without_an_id_is_refused(registry: ModelRegistry) -> None:
    with pytest.raises(UnknownModelError, match="no model id"):
        registry.resolve("openai/")


def test_an_unknown_id_under_a_known_provider_is_allowed_with_a_warning(
    registry: ModelRegistry,
) -> None:
    resolved = registry.resolve("anthropic/claude-sonnet-4-6:medium")
    model = resolved.model
    assert model.known is False
    assert model.ref == "anthropic/claude-sonnet-4-6"
    assert model.api == "anthropic-messages"
    assert model.base_url == registry.providers["anthropic"].base_url
    assert model.context_window == DEFAULT_CONTEXT_WINDOW
    assert model.max_tokens == DEFAULT_MAX_TOKENS
    assert resolved.thinking == "medium"
    assert resolved.warning is not None
    assert "claude-sonnet-4-6" in resolved.warning
    assert "default limits" in resolved.warning
    assert "claude-sonnet-4-5" in resolved.warning  # the close match


def test_custom_providers_and_models(registry: ModelRegistry) -> None:
    registry.add_provider(
        ProviderInfo(
            "local",
            "openai-completions",
            "http://127.0.0.1:8080/v1",
            headers={"X-Team": "a"},
            default_model="qwen",
        )
    )
    registry.add_model(
        Model(id="qwen", name="Qwen", api="openai-completions", provider="local", known=True)
    )
    assert registry.resolve("local/qwen").model.name == "Qwen"
    fallback = registry.resolve("local/llama3.1:8b").model
    assert fallback.id == "llama3.1:8b"
    assert fallback.headers == (("X-Team", "a"),)
    assert registry.default_model("local").id == "qwen"


def test_default_models(registry: ModelRegistry) -> None:
    assert registry.default_model().ref == "anthropic/claude-sonnet-4-5"
    assert registry.default_model("openai").ref == "openai/gpt-5"


def test_with_base_url() -> None:
    model = _model("openai-completions")
    assert with_base_url(model, None) is model
    assert with_base_url(model, "http://h/v1").base_url == "http://h/v1"
    assert model.base_url is None


# --- thinking levels ------------------------------------------------------------------------


def test_thinking_off_or_unsupported_means_no_budget_and_no_effort() -> None:
    for api in APIS:
        assert thinking_budget(_model(api), "off", 64_000) is None
        assert thinking_budget(_model(api), None, 64_000) is None
        assert reasoning_effort(_model(api), "off") is None
        assert thinking_budget(_model(api, reasoning=False), "high", 64_000) is None
        assert reasoning_effort(_model(api, reasoning=False), "high") is None


def test_anthropic_budgets_grow_with_the_level_and_respect_max_tokens() -> None:
    model = _model("anthropic-messages")
    budgets = [thinking_budget(model, level, 64_000) for level in THINKING_LEVELS[1:]]
    assert all(b is not None for b in budgets)
    assert budgets == sorted(budgets)
    assert len(set(budgets)) == len(budgets)
    assert budgets[0] == 1024  # Anthropic's minimum
    for level in THINKING_LEVELS[1:]:
        budget = thinking_budget(model, level, 8000)
        assert budget is not None
        assert 1024 <= budget < 8000
    # Even a tiny max_tokens never yields a budget below Anthropic's minimum.
    assert thinking_budget(model, "high", 1500) == 1024


def test_google_budgets_grow_with_the_level() -> None:
    model = _model("google-generative-ai")
    budgets = [thinking_budget(model, level, 65_536) for level in THINKING_LEVELS[1:]]
    assert budgets == sorted(budgets)
    assert len(set(budgets)) == len(budgets)
    assert all(b is not None and b > 0 for b in budgets)


@pytest.mark.parametrize("api", ["openai-responses", "openai-completions"])
def test_openai_effort_per_level(api: str) -> None:
    model = _model(api)
    efforts = {level: reasoning_effort(model, level) for level in THINKING_LEVELS[1:]}
    assert efforts == {
        "minimal": "minimal",
        "low": "low",
        "medium": "medium",
        "high": "high",
        "xhigh": "high",
    }


def test_next_thinking_level_cycles_through_every_level() -> None:
    seen = ["off"]
    level = next_thinking_level("off")
    while level != "off":
        seen.append(level)
        level = next_thinking_level(level)
    assert tuple(seen) == THINKING_LEVELS
