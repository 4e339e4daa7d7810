"""The model registry: packaged models, custom providers, cost and thinking budgets (SPEC §3.6)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

if TYPE_CHECKING:
    # Annotations only: the TUI's first frame needs the registry, not the message types.
    from picode.ai.types import Cost, Usage

ThinkingLevel: TypeAlias = Literal["off", "minimal", "low", "medium", "high", "xhigh"]
THINKING_LEVELS: tuple[ThinkingLevel, ...] = ("off", "minimal", "low", "medium", "high", "xhigh")

APIS: tuple[str, ...] = (
    "anthropic-messages",
    "openai-responses",
    "openai-completions",
    "google-generative-ai",
)

DEFAULT_CONTEXT_WINDOW = 128_000
DEFAULT_MAX_TOKENS = 16_384


@dataclass(slots=True, frozen=True)
class ModelCost:
    """US dollars per million tokens."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0


@dataclass(slots=True, frozen=True)
class Model:
    id: str
    name: str
    api: str
    provider: str
    base_url: str | None = None
    reasoning: bool = False
    input: tuple[str, ...] = ("text",)
    context_window: int = DEFAULT_CONTEXT_WINDOW
    max_tokens: int = DEFAULT_MAX_TOKENS
    cost: ModelCost = field(default_factory=ModelCost)
    headers: tuple[tuple[str, str], ...] = ()
    known: bool = True

    @property
    def ref(self) -> str:
        return f"{self.provider}/{self.id}"


@dataclass(slots=True)
class ProviderInfo:
    name: str
    api: str
    base_url: str | None = None
    api_key_env: tuple[str, ...] = ()
    api_key: str | None = None
    base_url_env: str | None = None
    default_model: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    #: The key variables are one way in of several (Vertex: else Google's default login).
    key_optional: bool = False
    #: A server on this machine (Ollama, LM Studio, ...): no key, found by probing its port.
    local: bool = False
    #: ``OLLAMA_HOST``-style variable: ``host[:port]`` of the server, ``/v1`` appended.
    host_env: str | None = None
    #: The server's ``/v1/models`` gives limits for ids picode's model list lacks.
    lists_models: bool = False
    #: Azure-style: the base URL is this variable's endpoint plus ``endpoint_path``.
    endpoint_env: str | None = None
    endpoint_path: str = ""
    #: The SDK client other than the API's default one: ``bedrock`` or ``vertex``.
    client: str | None = None

    @property
    def needs_key(self) -> bool:
        return bool(self.api_key_env) and not self.key_optional and not self.local


class UnknownModelError(LookupError):
    """A model reference that names no known provider; the message lists close matches."""


@dataclass(slots=True)
class ResolvedModel:
    model: Model
    thinking: ThinkingLevel | None = None
    warning: str | None = None


class ModelRegistry:
    """Built-in models plus whatever providers the configuration adds."""

    def __init__(self) -> None:
        self.providers: dict[str, ProviderInfo] = {}
        self._models: dict[str, dict[str, Model]] = {}

    def add_provider(self, info: ProviderInfo) -> None:
        self.providers[info.name] = info
        self._models.setdefault(info.name, {})

    def add_model(self, model: Model) -> None:
        self._models.setdefault(model.provider, {})[model.id] = model

    def models(self, provider: str | None = None) -> list[Model]:
        if provider is not None:
            return list(self._models.get(provider, {}).values())
        return [m for models in self._models.values() for m in models.values()]

    def get(self, provider: str, model_id: str) -> Model | None:
        return self._models.get(provider, {}).get(model_id)

    def resolve(self, ref: str) -> ResolvedModel:
        """``provider/id[:thinking]`` or a bare id that exactly one provider knows."""
        text = ref.strip()
        thinking: ThinkingLevel | None = None
        head, sep, tail = text.rpartition(":")
        if sep and tail in THINKING_LEVELS:
            text, thinking = head, tail  # type: ignore[assignment]
        provider_name, slash, model_id = text.partition("/")
        if not slash:
            owners = [m for m in self.models() if m.id == text]
            if len(owners) == 1:
                return ResolvedModel(owners[0], thinking)
            if len(owners) > 1:
                choices = ", ".join(m.ref for m in owners)
                raise UnknownModelError(f"'{text}' is ambiguous; use one of: {choices}")
            raise UnknownModelError(self._unknown_message(text))
        if provider_name not in self.providers:
            raise UnknownModelError(self._unknown_message(text, provider=provider_name))
        if not model_id:
            raise UnknownModelError(f"'{ref}' names a provider but no model id")
        model = self.get(provider_name, model_id)
        if model is not None:
            return ResolvedModel(model, thinking)
        info = self.providers[provider_name]
        fallback = Model(
            id=model_id,
            name=model_id,
            api=info.api,
            provider=provider_name,
            base_url=info.base_url,
            reasoning=True,
            input=("text", "image"),
            headers=tuple(info.headers.items()),
            known=False,
        )
        import difflib

        near = difflib.get_close_matches(model_id, [m.id for m in self.models(provider_name)], 3)
        hint = f" (did you mean {', '.join(near)}?)" if near else ""
        warning = unknown_model_warning(fallback, "default", hint)
        return ResolvedModel(fallback, thinking, warning)

    def _unknown_message(self, text: str, provider: str | None = None) -> str:
        import difflib

        refs = [m.ref for m in self.models()]
        near = difflib.get_close_matches(text, refs, 3, 0.4)
        if provider is not None:
            model_id = text.split("/", 1)[1] if "/" in text else ""
            close = difflib.get_close_matches(provider, list(self.providers), 2, 0.5)
            for position, name in enumerate(close):
                # The same id under the provider meant, when that provider has it; the
                # closest provider first.
                ref = f"{name}/{model_id}"
                if ref not in near:
                    near.insert(position, ref if ref in refs else f"the provider {name}")
            lead = f"Unknown provider '{provider}'"
        else:
            lead = f"Unknown model '{text}'"
        hint = f". Close matches: {', '.join(near)}" if near else ""
        known = ", ".join(sorted(self.providers))
        return f"{lead}{hint}. Known providers: {known}. A model is named provider/id."

    def default_model(self, provider: str | None = None) -> Model:
        name = provider or "anthropic"
        info = self.providers.get(name)
        if info is None or info.default_model is None:
            models = self.models(name) or self.models()
            return models[0]
        return self.resolve(f"{name}/{info.default_model}").model


def unknown_model_warning(model: Model, source: str, hint: str = "") -> str:
    """One line: the limits used for an id picode's model list lacks, and how to set them.
    ``source`` says where the limits came from ("default", "the server's")."""
    return (
        f"'{model.id}' is not in picode's model list for {model.provider} (refreshed by "
        f".ci/refresh-models); using {source} limits ({model.context_window:,} context, "
        f"{model.max_tokens:,} output){hint}. To set them, add it to [providers."
        f"{model.provider}] models in config.toml."
    )


@cache
def _builtin_data() -> dict[str, Any]:
    """``providers.json`` (kept by hand: endpoints, key variables, defaults) joined with
    ``models.json`` (generated by ``.ci/refresh-models``: the models' facts)."""
    # Next to this module in both the wheel and a checkout; importlib.resources would cost
    # ~10 ms of imports on the way to the first frame.
    here = Path(__file__).parent
    data: dict[str, Any] = json.loads((here / "providers.json").read_text(encoding="utf-8"))
    data.update(json.loads((here / "models.json").read_text(encoding="utf-8")))
    return data


def builtin_key_variables(provider: str) -> tuple[str, ...]:
    """The environment variables a packaged provider's key is read from (models.json)."""
    spec = _builtin_data()["providers"].get(provider)
    return tuple(spec.get("api_key_env", ())) if isinstance(spec, dict) else ()


def builtin_provider_spec(provider: str) -> dict[str, Any]:
    """A packaged provider's entry in providers.json (empty for a provider from config)."""
    spec = _builtin_data()["providers"].get(provider)
    return spec if isinstance(spec, dict) else {}


def builtin_registry() -> ModelRegistry:
    """A fresh registry holding the packaged providers and models."""
    data = _builtin_data()
    registry = ModelRegistry()
    for name, spec in data["providers"].items():
        registry.add_provider(
            ProviderInfo(
                name=name,
                api=spec["api"],
                base_url=spec.get("base_url"),
                api_key_env=tuple(spec.get("api_key_env", ())),
                base_url_env=spec.get("base_url_env"),
                default_model=spec.get("default_model"),
                key_optional=bool(spec.get("key_optional", False)),
                local=bool(spec.get("local", False)),
                host_env=spec.get("host_env"),
                lists_models=bool(spec.get("lists_models", False)),
                endpoint_env=spec.get("endpoint_env"),
                endpoint_path=spec.get("endpoint_path", ""),
                client=spec.get("client"),
            )
        )
    for spec in data["models"]:
        info = registry.providers[spec["provider"]]
        registry.add_model(model_from_spec(spec, info))
    return registry


def model_from_spec(spec: dict[str, Any], info: ProviderInfo) -> Model:
    cost = spec.get("cost") or {}
    return Model(
        id=str(spec["id"]),
        name=str(spec.get("name") or spec["id"]),
        api=str(spec.get("api") or info.api),
        provider=info.name,
        base_url=spec.get("base_url") or info.base_url,
        reasoning=bool(spec.get("reasoning", False)),
        input=tuple(spec.get("input", ("text",))),
        context_window=int(spec.get("context_window", DEFAULT_CONTEXT_WINDOW)),
        max_tokens=int(spec.get("max_tokens", DEFAULT_MAX_TOKENS)),
        cost=ModelCost(
            input=float(cost.get("input", 0)),
            output=float(cost.get("output", 0)),
            cache_read=float(cost.get("cache_read", 0)),
            cache_write=float(cost.get("cache_write", 0)),
        ),
        headers=tuple((spec.get("headers") or info.headers).items()),
    )


def calculate_cost(model: Model, usage: Usage) -> Cost:
    """Fill ``usage.cost`` from the model's prices and return it."""
    prices = model.cost
    cost = usage.cost
    cost.input = usage.input * prices.input / 1_000_000
    cost.output = usage.output * prices.output / 1_000_000
    cost.cache_read = usage.cache_read * prices.cache_read / 1_000_000
    cost.cache_write = usage.cache_write * prices.cache_write / 1_000_000
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write
    return cost


# --- thinking levels ------------------------------------------------------------------

_ANTHROPIC_BUDGETS = {
    "minimal": 1024,
    "low": 4096,
    "medium": 10_000,
    "high": 32_000,
    "xhigh": 60_000,
}
_GOOGLE_BUDGETS = {"minimal": 512, "low": 2048, "medium": 8192, "high": 24_576, "xhigh": 32_768}
_OPENAI_EFFORT = {
    "minimal": "minimal",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
}


def thinking_budget(model: Model, level: ThinkingLevel | None, max_tokens: int) -> int | None:
    """Token budget for APIs that take one (Anthropic, Gemini); None means thinking off."""
    if not level or level == "off" or not model.reasoning:
        return None
    table = _GOOGLE_BUDGETS if model.api == "google-generative-ai" else _ANTHROPIC_BUDGETS
    budget = table[level]
    if model.api == "anthropic-messages":
        # Anthropic requires budget < max_tokens and at least 1024.
        budget = max(1024, min(budget, max_tokens - 1024))
    return budget


def reasoning_effort(model: Model, level: ThinkingLevel | None) -> str | None:
    """Effort string for OpenAI-style APIs; None means do not ask for reasoning."""
    if not level or level == "off" or not model.reasoning:
        return None
    return _OPENAI_EFFORT[level]


def next_thinking_level(level: ThinkingLevel) -> ThinkingLevel:
    index = THINKING_LEVELS.index(level)
    return THINKING_LEVELS[(index + 1) % len(THINKING_LEVELS)]


def with_base_url(model: Model, base_url: str | None) -> Model:
    return model if not base_url else replace(model, base_url=base_url)
