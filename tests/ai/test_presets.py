"""providers.json: its schema, and the preset providers it packages (docs/providers.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import picode.ai.models as models_module
from picode.ai.models import (
    APIS,
    Model,
    ModelRegistry,
    ProviderInfo,
    UnknownModelError,
    builtin_registry,
)

PROVIDERS_JSON = Path(models_module.__file__).with_name("providers.json")

#: The file's schema, as docs/providers.md describes it; additional keys are mistakes.
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["providers"],
    "additionalProperties": False,
    "properties": {
        "providers": {
            "type": "object",
            "propertyNames": {"pattern": "^[a-z][a-z0-9-]*$"},
            "additionalProperties": {
                "type": "object",
                "required": ["api", "base_url", "api_key_env"],
                "additionalProperties": False,
                "properties": {
                    "api": {"enum": list(APIS)},
                    "base_url": {"type": ["string", "null"], "pattern": "^https?://"},
                    "api_key_env": {
                        "type": "array",
                        "items": {"type": "string", "pattern": "^[A-Z][A-Z0-9_]*$"},
                    },
                    "base_url_env": {"type": "string", "pattern": "^[A-Z][A-Z0-9_]*_BASE_URL$"},
                    "default_model": {"type": ["string", "null"], "minLength": 1},
                    "key_optional": {"type": "boolean"},
                    "login_env": {
                        "type": "array",
                        "items": {"type": "string", "pattern": "^[A-Z][A-Z0-9_]*$"},
                    },
                    "local": {"type": "boolean"},
                    "host_env": {"type": "string", "pattern": "^[A-Z][A-Z0-9_]*$"},
                    "lists_models": {"type": "boolean"},
                    "endpoint_env": {"type": "string", "pattern": "^[A-Z][A-Z0-9_]*$"},
                    "endpoint_path": {"type": "string", "pattern": "^/"},
                    "client": {"enum": ["bedrock", "vertex"]},
                },
            },
        }
    },
}

OPENAI_COMPATIBLE = (
    "openrouter",
    "groq",
    "cerebras",
    "xai",
    "deepseek",
    "mistral",
    "together",
    "fireworks",
)
LOCAL_SERVERS = {"ollama": 11434, "lmstudio": 1234, "llamacpp": 8080, "vllm": 8000}


@pytest.fixture
def registry() -> ModelRegistry:
    return builtin_registry()


def test_providers_json_matches_its_schema() -> None:
    data = json.loads(PROVIDERS_JSON.read_text(encoding="utf-8"))
    jsonschema.validate(data, SCHEMA)


@pytest.mark.parametrize(
    "broken",
    [
        {"api": "openai-chat", "base_url": None, "api_key_env": [], "default_model": None},
        {"api": "openai-completions", "base_url": "x", "api_key_env": [], "default_model": None},
        {"api": "openai-completions", "base_url": None, "api_key_env": [], "default_mdl": "x"},
    ],
    ids=["unknown api", "url without scheme", "misspelt key"],
)
def test_the_schema_rejects_a_broken_entry(broken: dict[str, Any]) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"providers": {"x": broken}}, SCHEMA)


def test_every_preset_is_packaged(registry: ModelRegistry) -> None:
    for name in OPENAI_COMPATIBLE:
        info = registry.providers[name]
        assert info.api == "openai-completions", name
        assert info.base_url and info.base_url.startswith("https://"), name
        assert info.api_key_env == (name.upper() + "_API_KEY",), name
        assert info.base_url_env == name.upper() + "_BASE_URL", name
        assert info.needs_key and not info.local, name
    for name, port in LOCAL_SERVERS.items():
        info = registry.providers[name]
        assert info.local and info.lists_models and not info.needs_key, name
        assert info.base_url == f"http://127.0.0.1:{port}/v1", name
        assert info.base_url_env == name.upper() + "_BASE_URL", name
    assert registry.providers["ollama"].host_env == "OLLAMA_HOST"
    assert registry.providers["openrouter"].lists_models
    azure = registry.providers["azure-openai"]
    assert azure.api == "openai-responses" and azure.endpoint_env == "AZURE_OPENAI_ENDPOINT"
    assert azure.base_url is None and azure.needs_key
    for name, client in (("bedrock", "bedrock"), ("vertex", "vertex")):
        info = registry.providers[name]
        assert info.api == "anthropic-messages" and info.client == client
        assert info.key_optional and not info.needs_key  # other logins exist


def test_a_presets_default_is_one_of_its_models(registry: ModelRegistry) -> None:
    for name, info in registry.providers.items():
        if info.default_model is not None and name not in ("anthropic", "openai", "google"):
            assert registry.get(name, info.default_model) is not None, name
        if registry.models(name):
            assert info.default_model is not None, name


def test_the_big_three_do_not_list_server_models(registry: ModelRegistry) -> None:
    # Their ids come from picode's model list only: nothing is fetched for them.
    for name in ("anthropic", "openai", "google"):
        assert not registry.providers[name].lists_models


@pytest.mark.parametrize("name", [*OPENAI_COMPATIBLE, *LOCAL_SERVERS, "azure-openai"])
def test_a_preset_without_models_still_takes_any_id(registry: ModelRegistry, name: str) -> None:
    resolved = registry.resolve(f"{name}/some-model:high")
    assert resolved.model.provider == name
    assert resolved.model.api == registry.providers[name].api
    assert resolved.thinking == "high"
    assert resolved.warning is not None
    assert "picode's model list" in resolved.warning
    assert f"[providers.{name}]" in resolved.warning
    assert "\n" not in resolved.warning


def test_bedrock_ids_keep_their_version_suffix(registry: ModelRegistry) -> None:
    ref = "bedrock/global.anthropic.claude-sonnet-4-5-20250929-v1:0"
    assert registry.resolve(ref).model.id == "global.anthropic.claude-sonnet-4-5-20250929-v1:0"
    resolved = registry.resolve(ref + ":low")
    assert resolved.model.id.endswith("-v1:0") and resolved.thinking == "low"


def test_a_bare_id_a_platform_re_hosts_means_the_makers(registry: ModelRegistry) -> None:
    shared = [
        m
        for m in registry.models()
        if m.provider in ("vertex", "azure-openai")
        and registry.get("anthropic" if m.provider == "vertex" else "openai", m.id) is not None
    ]
    assert shared, "the packaged list has models both a maker and a platform serve"
    for model in shared:
        assert registry.resolve(model.id).model.provider in ("anthropic", "openai")
        assert registry.resolve(model.ref).model.provider == model.provider


def test_a_bare_id_two_hosts_serve_is_still_ambiguous() -> None:
    registry = ModelRegistry()
    for name in ("groq", "together"):
        registry.add_provider(ProviderInfo(name, "openai-completions"))
        registry.add_model(Model("gpt-oss", "gpt-oss", "openai-completions", name))
    with pytest.raises(UnknownModelError, match="ambiguous"):
        registry.resolve("gpt-oss")
