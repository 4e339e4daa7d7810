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
    with_base_url,
)
from picode.ai.thinking import thinking_request
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
        info = registry.providers[model.provider]
        assert model.api in APIS, model.ref
        assert model.known
        assert model.name
        # Bedrock and Vertex take the SDK's URL, Azure's comes from AZURE_OPENAI_ENDPOINT.
        assert model.base_url or info.client or info.endpoint_env, model.ref
        big = model.provider in ("anthropic", "openai", "google")
        assert model.context_window >= (100_000 if big else 8_000), model.ref
        assert 0 < model.max_tokens <= model.context_window, model.ref
        assert model.cost.input > 0 and model.cost.output > 0, model.ref
        if big:  # some presets' models price output below input (their source says so)
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
# The packaged list moves with each refresh: these tests take their ids from it.


def _packaged_id(registry: ModelRegistry, provider: str, contains: str = "") -> str:
    return next(m.id for m in registry.models(provider) if contains in m.id)


def test_resolve_provider_slash_id(registry: ModelRegistry) -> None:
    model_id = _packaged_id(registry, "anthropic")
    resolved = registry.resolve(f"anthropic/{model_id}")
    assert resolved.model.ref == f"anthropic/{model_id}"
    assert resolved.model.api == "anthropic-messages"
    assert resolved.thinking is None
    assert resolved.warning is None


@pytest.mark.parametrize("level", THINKING_LEVELS)
def test_resolve_with_a_thinking_suffix(registry: ModelRegistry, level: str) -> None:
    model_id = _packaged_id(registry, "openai")
    resolved = registry.resolve(f"openai/{model_id}:{level}")
    assert resolved.model.ref == f"openai/{model_id}"
    assert resolved.thinking == level


def test_a_colon_that_is_not_a_thinking_level_stays_in_the_id(registry: ModelRegistry) -> None:
    resolved = registry.resolve("openai/ft:gpt-5:my-org")
    assert resolved.model.id == "ft:gpt-5:my-org"
    assert resolved.thinking is None
    assert not resolved.model.known


def test_resolve_a_bare_id_that_one_provider_knows(registry: ModelRegistry) -> None:
    model_id = _packaged_id(registry, "google")
    resolved = registry.resolve(f" {model_id}:low ")
    assert resolved.model.ref == f"google/{model_id}"
    assert resolved.thinking == "low"


def test_an_ambiguous_bare_id_lists_the_choices(registry: ModelRegistry) -> None:
    model_id = _packaged_id(registry, "openai")
    registry.add_provider(ProviderInfo("elsewhere", "openai-completions", "http://x"))
    registry.add_model(Model(id=model_id, name="x", api="openai-completions", provider="elsewhere"))
    with pytest.raises(UnknownModelError, match="ambiguous") as info:
        registry.resolve(model_id)
    assert f"openai/{model_id}" in str(info.value)
    assert f"elsewhere/{model_id}" in str(info.value)


def test_an_unknown_bare_id_suggests_close_matches(registry: ModelRegistry) -> None:
    model_id = _packaged_id(registry, "anthropic", "sonnet")
    typo = model_id.replace("sonnet", "sonet")
    with pytest.raises(UnknownModelError) as info:
        registry.resolve(typo)
    text = str(info.value)
    assert f"Unknown model '{typo}'" in text
    assert f"anthropic/{model_id}" in text
    known = text.split("Known providers: ", 1)[1].split(". ", 1)[0].split(", ")
    assert {"anthropic", "google", "openai", "ollama"} <= set(known)
    assert known == sorted(known)


def test_an_unknown_provider_lists_close_matches_and_known_providers(
    registry: ModelRegistry,
) -> None:
    model_id = _packaged_id(registry, "anthropic")
    with pytest.raises(UnknownModelError) as info:
        registry.resolve(f"antropic/{model_id}:high")
    text = str(info.value)
    assert "Unknown provider 'antropic'" in text
    assert f"Close matches: anthropic/{model_id}" in text  # the id under the provider meant
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
    near = _packaged_id(registry, "anthropic", "sonnet")
    unknown = near[: near.rindex("-")] + "-99"
    resolved = registry.resolve(f"anthropic/{unknown}:medium")
    model = resolved.model
    assert model.known is False
    assert model.ref == f"anthropic/{unknown}"
    assert model.api == "anthropic-messages"
    assert model.base_url == registry.providers["anthropic"].base_url
    assert model.context_window == DEFAULT_CONTEXT_WINDOW
    assert model.max_tokens == DEFAULT_MAX_TOKENS
    assert resolved.thinking == "medium"
    assert resolved.warning is not None
    assert unknown in resolved.warning
    assert "default limits" in resolved.warning
    assert "refresh-models" in resolved.warning
    assert near in resolved.warning  # the close match


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


def test_each_big_provider_defaults_to_the_model_its_flagship_alias_names(
    registry: ModelRegistry,
) -> None:
    for provider, alias in (("anthropic", "opus"), ("openai", "gpt"), ("google", "gemini")):
        assert registry.default_model(provider).ref == registry.aliases[alias]
    assert registry.default_model().provider == "anthropic"


def test_with_base_url() -> None:
    model = _model("openai-completions")
    assert with_base_url(model, None) is model
    assert with_base_url(model, "http://h/v1").base_url == "http://h/v1"
    assert model.base_url is None


# --- thinking levels ------------------------------------------------------------------------


def _budget(model: Model, level: str, max_tokens: int) -> int | None:
    return thinking_request(model, level, max_tokens).budget  # type: ignore[arg-type]


def test_thinking_off_or_unsupported_sends_nothing_for_a_model_picode_does_not_know() -> None:
    for api in APIS:
        for model, level in (
            (_model(api), "off"),
            (_model(api), None),
            (_model(api, reasoning=False), "high"),
        ):
            request = thinking_request(model, level, 64_000)  # type: ignore[arg-type]
            assert request.omitted
            assert (request.budget, request.value) == (None, None)
            assert request.label == "off"


def test_anthropic_budgets_grow_with_the_level_and_respect_max_tokens() -> None:
    model = _model("anthropic-messages")
    budgets = [_budget(model, level, 64_000) for level in THINKING_LEVELS[1:]]
    assert all(b is not None for b in budgets)
    assert budgets == sorted(budgets)  # type: ignore[type-var]
    assert len(set(budgets)) == len(budgets)
    assert budgets[0] == 1024  # Anthropic's minimum
    for level in THINKING_LEVELS[1:]:
        budget = _budget(model, level, 8000)
        assert budget is not None
        assert 1024 <= budget < 8000
    # Even a tiny max_tokens never yields a budget below Anthropic's minimum.
    assert _budget(model, "high", 1500) == 1024


def test_google_budgets_grow_with_the_level() -> None:
    model = _model("google-generative-ai")
    budgets = [_budget(model, level, 65_536) for level in THINKING_LEVELS[1:]]
    assert budgets == sorted(budgets)  # type: ignore[type-var]
    assert len(set(budgets)) == len(budgets)
    assert all(b is not None and b > 0 for b in budgets)


@pytest.mark.parametrize("api", ["openai-responses", "openai-completions"])
def test_an_unknown_openai_style_model_gets_the_efforts_every_server_takes(api: str) -> None:
    model = _model(api)
    efforts = {level: thinking_request(model, level).value for level in THINKING_LEVELS[1:]}
    assert efforts == {
        "minimal": "low",
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
