"""Where a preset's requests go and whether it needs a key: its variables, the config, the
packaged default (docs/providers.md, "Preset providers")."""

from __future__ import annotations

from pathlib import Path

import pytest

from picode.ai.errors import MissingApiKeyError
from picode.ai.models import builtin_registry
from picode.session.config.providers import apply_providers, base_url_for, missing_endpoint
from picode.session.config.settings import load_config
from picode.session.models.credentials import Credentials
from picode.session.paths import Paths, resolve_paths

from .test_config import write_user


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("127.0.0.1:11500", "http://127.0.0.1:11500/v1"),
        ("gpu-box", "http://gpu-box:11434/v1"),
        ("0.0.0.0", "http://127.0.0.1:11434/v1"),
        ("0.0.0.0:9999", "http://127.0.0.1:9999/v1"),
        ("https://ollama.example.com", "https://ollama.example.com/v1"),
        ("http://gpu-box:11434", "http://gpu-box:11434/v1"),
        ("http://[::1]:11434", "http://[::1]:11434/v1"),
        ("http://gpu-box:11434/ollama/", "http://gpu-box:11434/ollama/v1"),
    ],
)
def test_ollama_host_is_read_as_ollama_reads_it(host: str, url: str) -> None:
    assert base_url_for(builtin_registry(), "ollama", {"OLLAMA_HOST": host}) == url


def test_the_base_url_variable_wins_over_the_host_variable() -> None:
    env = {"OLLAMA_HOST": "gpu-box", "OLLAMA_BASE_URL": "http://proxy:1/v1"}
    assert base_url_for(builtin_registry(), "ollama", env) == "http://proxy:1/v1"
    assert base_url_for(builtin_registry(), "ollama", {}) == "http://127.0.0.1:11434/v1"


def test_a_config_url_wins_over_ollama_host_but_not_over_the_base_url_variable(
    paths: Paths, cwd: Path
) -> None:
    write_user(paths, '[providers.ollama]\nbase_url = "http://gpu-box:11434/v1"\n')
    registry = builtin_registry()
    apply_providers(registry, load_config(paths, cwd).settings)
    assert base_url_for(registry, "ollama", {"OLLAMA_HOST": "0.0.0.0"}) == (
        "http://gpu-box:11434/v1"
    )
    env = {"OLLAMA_BASE_URL": "http://other:1/v1"}
    assert base_url_for(registry, "ollama", env) == "http://other:1/v1"
    assert registry.providers["ollama"].local  # still needs no key


def test_azure_base_url_is_the_endpoint_plus_the_v1_path() -> None:
    registry = builtin_registry()
    env = {"AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com/"}
    assert base_url_for(registry, "azure-openai", env) == "https://res.openai.azure.com/openai/v1"
    assert missing_endpoint(registry, "azure-openai", env) is None
    assert missing_endpoint(registry, "azure-openai", {}) == (
        "No endpoint for azure-openai: set AZURE_OPENAI_ENDPOINT or AZURE_OPENAI_BASE_URL "
        "(e.g. export AZURE_OPENAI_ENDPOINT=https://<resource>.openai.azure.com)"
    )
    assert missing_endpoint(registry, "groq", {}) is None


def credentials(tmp_path: Path, **env: str) -> Credentials:
    return Credentials(builtin_registry(), resolve_paths({"PICODE_HOME": str(tmp_path)}), env)


def test_which_presets_need_a_key(tmp_path: Path) -> None:
    creds = credentials(tmp_path)
    registry = creds.registry

    def unusable(name: str) -> bool:
        return not creds.has_key(registry.resolve(f"{name}/some-id").model)

    assert {name for name in registry.providers if unusable(name)} == {
        *("anthropic", "openai", "google", "openrouter", "groq", "cerebras", "xai"),
        *("deepseek", "mistral", "together", "fireworks", "azure-openai"),
        *("bedrock", "vertex"),
    }
    with pytest.raises(MissingApiKeyError, match="Set MISTRAL_API_KEY") as missing:
        creds.require(registry.resolve("mistral/devstral").model)
    assert "another model (--model; /model in the TUI)" in str(missing.value)
    # Bedrock and Vertex have other logins, which need no variable: a request may try.
    creds.require(registry.resolve("bedrock/some-id").model)
    creds.require(registry.resolve("vertex/some-id").model)


@pytest.mark.parametrize(
    ("provider", "variable"),
    [
        ("bedrock", "AWS_BEARER_TOKEN_BEDROCK"),
        ("bedrock", "AWS_PROFILE"),
        ("vertex", "ANTHROPIC_VERTEX_ACCESS_TOKEN"),
        ("vertex", "GOOGLE_APPLICATION_CREDENTIALS"),
    ],
)
def test_a_platform_counts_as_usable_by_its_key_or_login(
    tmp_path: Path, provider: str, variable: str
) -> None:
    creds = credentials(tmp_path, **{variable: "x"})
    assert creds.has_key(creds.registry.resolve(f"{provider}/some-id").model)


def test_a_preset_key_is_read_from_its_variable(tmp_path: Path) -> None:
    creds = credentials(tmp_path, XAI_API_KEY="xai-test")
    model = creds.registry.resolve("xai/grok-next").model
    assert creds.api_key(model) == "xai-test"
    creds.require(model)
    env_url = credentials(tmp_path, XAI_BASE_URL="http://gateway/v1")
    assert env_url.base_url(model) == "http://gateway/v1"


def test_azure_with_a_key_but_no_endpoint_is_refused_before_a_request(tmp_path: Path) -> None:
    creds = credentials(tmp_path, AZURE_OPENAI_API_KEY="k")
    model = creds.registry.resolve("azure-openai/deployment").model
    with pytest.raises(MissingApiKeyError, match="No endpoint for azure-openai"):
        creds.require(model)
