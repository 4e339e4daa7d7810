"""An id picode's model list lacks, under a provider whose server lists its models: the
server's limits (``/v1/models``), or the defaults and a warning saying why."""

from __future__ import annotations

from pathlib import Path

from picode.ai.models import DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_TOKENS, builtin_registry
from picode.session.models.choice import choose_model
from picode.session.models.credentials import Credentials
from picode.session.paths import resolve_paths
from tests.providers.test_server_models import closed_port
from tests.wire.server import WireServer, json_response


def credentials_with(tmp_path: Path, **env: str) -> Credentials:
    paths = resolve_paths({"PICODE_HOME": str(tmp_path)})
    return Credentials(builtin_registry(), paths, env=env)


def test_an_unknown_local_id_takes_the_servers_context(tmp_path: Path, wire: WireServer) -> None:
    wire.enqueue(json_response(200, {"data": [{"id": "Qwen/Qwen3-8B", "max_model_len": 32768}]}))
    credentials = credentials_with(tmp_path, VLLM_BASE_URL=wire.url + "/v1")
    choice = choose_model(credentials.registry, credentials, "vllm/Qwen/Qwen3-8B")
    assert choice.model.context_window == 32768
    assert choice.model.max_tokens == min(DEFAULT_MAX_TOKENS, 32768)
    assert wire.requests[0].path == "/v1/models"
    (warning,) = choice.warnings
    assert "picode's model list" in warning and ".ci/refresh-models" in warning
    assert "the server's limits (32,768 context" in warning
    assert "[providers.vllm]" in warning and "\n" not in warning


def test_openrouter_gives_output_limit_and_prices(tmp_path: Path, wire: WireServer) -> None:
    entry = {
        "id": "qwen/qwen3-coder",
        "context_length": 262144,
        "top_provider": {"max_completion_tokens": 65536},
        "pricing": {"prompt": "0.0000002", "completion": "0.000001"},
    }
    wire.enqueue(json_response(200, {"data": [entry]}))
    credentials = credentials_with(
        tmp_path, OPENROUTER_BASE_URL=wire.url + "/api/v1", OPENROUTER_API_KEY="sk-or-test"
    )
    choice = choose_model(credentials.registry, credentials, "openrouter/qwen/qwen3-coder:high")
    model = choice.model
    assert (model.context_window, model.max_tokens) == (262144, 65536)
    assert (model.cost.input, model.cost.output) == (0.2, 1.0)
    assert choice.thinking == "high"
    assert wire.requests[0].path == "/api/v1/models"
    assert wire.requests[0].headers["authorization"] == "Bearer sk-or-test"


def test_ollama_host_points_the_lookup(tmp_path: Path, wire: WireServer) -> None:
    wire.enqueue(json_response(200, {"data": [{"id": "qwen3:8b"}]}))
    credentials = credentials_with(tmp_path, OLLAMA_HOST=f"127.0.0.1:{wire.port}")
    choice = choose_model(credentials.registry, credentials, "ollama/qwen3:8b")
    assert wire.requests[0].path == "/v1/models"
    # Ollama's list states no limits: the defaults, said once.
    assert choice.model.context_window == DEFAULT_CONTEXT_WINDOW
    (warning,) = choice.warnings
    assert "using default limits" in warning


def test_an_unreachable_local_server_is_said_and_the_id_still_works(tmp_path: Path) -> None:
    port = closed_port()
    credentials = credentials_with(tmp_path, LMSTUDIO_BASE_URL=f"http://127.0.0.1:{port}/v1")
    choice = choose_model(credentials.registry, credentials, "lmstudio/some-model")
    assert choice.model.ref == "lmstudio/some-model"
    assert choice.model.context_window == DEFAULT_CONTEXT_WINDOW
    default, server = choice.warnings
    assert "using default limits" in default
    assert server == (
        f"lmstudio: no server at http://127.0.0.1:{port}/v1/models (connection refused). "
        "Is it running?"
    )


def test_a_malformed_models_list_is_said(tmp_path: Path, wire: WireServer) -> None:
    wire.enqueue(json_response(200, {"models": "none"}))
    credentials = credentials_with(tmp_path, LLAMACPP_BASE_URL=wire.url + "/v1")
    choice = choose_model(credentials.registry, credentials, "llamacpp/m")
    assert choice.model.context_window == DEFAULT_CONTEXT_WINDOW
    assert any("did not answer a models list" in w for w in choice.warnings)


def test_an_id_the_server_does_not_list_names_what_it_lists(
    tmp_path: Path, wire: WireServer
) -> None:
    wire.enqueue(json_response(200, {"data": [{"id": "llama3.2"}, {"id": "evil\x1b]0;x\x07"}]}))
    credentials = credentials_with(tmp_path, OLLAMA_BASE_URL=wire.url + "/v1")
    choice = choose_model(credentials.registry, credentials, "ollama/qwen3")
    note = choice.warnings[-1]
    assert "ollama's server does not list 'qwen3'" in note
    assert "llama3.2" in note
    assert "\x1b" not in note and "\x07" not in note


def test_the_big_providers_are_never_asked(tmp_path: Path, wire: WireServer) -> None:
    credentials = credentials_with(
        tmp_path, ANTHROPIC_BASE_URL=wire.url, OPENAI_BASE_URL=wire.url + "/v1"
    )
    for ref in ("anthropic/claude-next", "openai/gpt-next", "google/gemini-next"):
        choice = choose_model(credentials.registry, credentials, ref)
        assert not choice.model.known
    assert wire.requests == []
