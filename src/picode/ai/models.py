"""The model registry: packaged models, custom providers and cost (docs/models.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from picode.ai.thinking import ThinkingControl

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

#: The makers' own APIs; a bare id they share with a platform preset means theirs.
FIRST_PARTY: tuple[str, ...] = ("anthropic", "openai", "google")

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
    #: How thinking levels are sent (None: the API's usual way, see picode.ai.thinking).
    thinking: ThinkingControl | None = None
    #: The day the provider retires the model (YYYY-MM-DD), and what it names instead.
    retires: str | None = None
    successor: str | None = None

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
    #: Variables that show the other way in is set up (``AWS_PROFILE``); a key_optional
    #: provider counts as usable when its key or one of these is set.
    login_env: tuple[str, ...] = ()
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


@dataclass(slots=True, frozen=True)
class _Spec:
    spec: dict[str, Any]
    info: ProviderInfo


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
        #: Per provider, in order: a Model, or the packaged spec it is built from on first
        #: use (most of the list is never looked at in a session, and start-up is short).
        self._models: dict[str, dict[str, Model | _Spec]] = {}
        #: Short names that follow the newest model of a family: ``opus`` -> provider/id.
        self.aliases: dict[str, str] = {}
        #: Packaged providers whose model file is not read yet: each is read when one of
        #: its models is first asked for (start-up reads only the chosen provider's).
        self._unread: dict[str, Callable[[], list[dict[str, Any]]]] = {}

    def add_provider(self, info: ProviderInfo) -> None:
        self.providers[info.name] = info
        self._models.setdefault(info.name, {})

    def add_model(self, model: Model) -> None:
        self._read(model.provider)  # a model from config replaces the packaged one in place
        self._models.setdefault(model.provider, {})[model.id] = model

    def add_unread(self, provider: str, read: Callable[[], list[dict[str, Any]]]) -> None:
        """``provider``'s packaged models, read by ``read`` when first needed."""
        self._unread[provider] = read

    def _read(self, provider: str) -> None:
        read = self._unread.pop(provider, None)
        info = self.providers.get(provider)
        if read is None or info is None:
            return
        models = self._models.setdefault(provider, {})
        for spec in read():
            models.setdefault(str(spec["id"]), _Spec(spec, info))

    def models(self, provider: str | None = None) -> list[Model]:
        names = [provider] if provider is not None else list(self._models)
        for name in names:
            self._read(name)
        return [
            self._built(name, model_id) for name in names for model_id in self._models.get(name, {})
        ]

    def get(self, provider: str, model_id: str) -> Model | None:
        self._read(provider)
        if model_id not in self._models.get(provider, {}):
            return None
        return self._built(provider, model_id)

    def _built(self, provider: str, model_id: str) -> Model:
        models = self._models[provider]
        entry = models[model_id]
        if isinstance(entry, _Spec):
            entry = models[model_id] = model_from_spec(entry.spec, entry.info)
        return entry

    def resolve(self, ref: str) -> ResolvedModel:
        """``provider/id[:thinking]`` or a bare id that exactly one provider knows."""
        text = ref.strip()
        thinking: ThinkingLevel | None = None
        head, sep, tail = text.rpartition(":")
        if sep and tail in THINKING_LEVELS:
            text, thinking = head, tail  # type: ignore[assignment]
        provider_name, slash, model_id = text.partition("/")
        if not slash:
            if text.lower() in self.aliases:  # before the ids: it reads one provider's file
                suffix = f":{thinking}" if thinking else ""
                return self.resolve(self.aliases[text.lower()] + suffix)
            owners = [m for m in self.models() if m.id == text]
            makers = [m for m in owners if m.provider in FIRST_PARTY]
            if len(makers) == 1 and all(m in makers or self._rehosts(m.provider) for m in owners):
                # Served by its maker and re-hosted by a cloud (Vertex, Azure): the maker's.
                owners = makers
            if len(owners) == 1:
                return ResolvedModel(owners[0], thinking, _retired_warning(owners[0]))
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
            return ResolvedModel(model, thinking, _retired_warning(model))
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

    def _rehosts(self, provider: str) -> bool:
        """A cloud serving other makers' models under their ids (Bedrock, Vertex, Azure)."""
        info = self.providers.get(provider)
        return info is not None and bool(info.client or info.endpoint_env)

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
        f"{model.ref} is not in picode's model list (.ci/refresh-models); using {source} "
        f"limits ({model.context_window:,} context, {model.max_tokens:,} output){hint}. "
        f"Set them under [providers.{model.provider}] models in config.toml."
    )


def _retired_warning(model: Model) -> str | None:
    import time  # not datetime: this runs on the way to the first frame

    if model.retires is None or model.retires > time.strftime("%Y-%m-%d", time.gmtime()):
        return None
    instead = f"; its successor is {model.successor}" if model.successor else ""
    return f"{model.ref} was retired by its provider on {model.retires}{instead}."


#: The generated model list (``.ci/refresh-models``): ``index.json`` (source, aliases,
#: defaults) and one file of models per provider. Next to this module in both the wheel and
#: a checkout; importlib.resources would cost ~10 ms of imports on the way to the first frame.
MODEL_LIST = Path(__file__).parent / "model_list"


@cache
def _builtin_data() -> dict[str, Any]:
    """``providers.json`` (kept by hand: endpoints, key variables, defaults) joined with the
    model list's index (generated: aliases, defaults)."""
    here = Path(__file__).parent
    data: dict[str, Any] = json.loads((here / "providers.json").read_text(encoding="utf-8"))
    data.update(json.loads((MODEL_LIST / "index.json").read_text(encoding="utf-8")))
    return data


def packaged_models(provider: str) -> list[dict[str, Any]]:
    """The generated list's models of one provider (none for a provider it does not cover)."""
    path = MODEL_LIST / f"{provider}.json"
    if not path.is_file():
        return []
    models: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["models"]
    return models


def builtin_key_variables(provider: str) -> tuple[str, ...]:
    """The environment variables a packaged provider's key is read from (providers.json)."""
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
    registry.aliases = dict(data.get("aliases", {}))
    defaults: dict[str, str] = data.get("defaults", {})
    for name, spec in data["providers"].items():
        registry.add_provider(
            ProviderInfo(
                name=name,
                api=spec["api"],
                base_url=spec.get("base_url"),
                api_key_env=tuple(spec.get("api_key_env", ())),
                base_url_env=spec.get("base_url_env"),
                default_model=defaults.get(name) or spec.get("default_model"),
                key_optional=bool(spec.get("key_optional", False)),
                login_env=tuple(spec.get("login_env", ())),
                local=bool(spec.get("local", False)),
                host_env=spec.get("host_env"),
                lists_models=bool(spec.get("lists_models", False)),
                endpoint_env=spec.get("endpoint_env"),
                endpoint_path=spec.get("endpoint_path", ""),
                client=spec.get("client"),
            )
        )
    for name in data.get("providers_listed", ()):
        if name in registry.providers:  # tests/ai/test_registry_file.py holds them together
            registry.add_unread(name, partial(packaged_models, name))
    return registry


def model_from_spec(spec: dict[str, Any], info: ProviderInfo) -> Model:
    cost = spec.get("cost") or {}
    thinking = spec.get("thinking")
    return Model(
        id=str(spec["id"]),
        name=str(spec.get("name") or spec["id"]),
        api=str(spec.get("api") or info.api),
        provider=info.name,
        base_url=spec.get("base_url") or info.base_url,
        reasoning=bool(spec.get("reasoning", isinstance(thinking, dict))),
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
        thinking=ThinkingControl.from_spec(thinking) if isinstance(thinking, dict) else None,
        retires=spec.get("retires"),
        successor=spec.get("successor"),
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


def next_thinking_level(level: ThinkingLevel) -> ThinkingLevel:
    index = THINKING_LEVELS.index(level)
    return THINKING_LEVELS[(index + 1) % len(THINKING_LEVELS)]


def with_base_url(model: Model, base_url: str | None) -> Model:
    return model if not base_url else replace(model, base_url=base_url)
