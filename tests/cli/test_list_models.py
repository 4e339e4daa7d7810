"""``picode --list-models [filter]`` and the preset providers run by their variables alone
(an OpenAI-compatible one, a local server's limits, Azure, Vertex), through the real
executable against the wire server."""

from __future__ import annotations

import json

from picode.ai.models import builtin_registry
from tests.cli.harness import PicodeEnv, Result
from tests.providers.test_server_models import closed_port
from tests.wire.anthropic_protocol import AnthropicStream
from tests.wire.chat_protocol import ChatStream
from tests.wire.responses_protocol import ResponsesStream, usage
from tests.wire.server import WireServer, json_response

HEAVY = ("anthropic", "openai", "google.genai", "textual")


def local_servers(ollama: str | None = None) -> dict[str, str]:
    """Every local preset pointed at a closed port (a server on this machine must not
    answer for them), Ollama at ``ollama`` when given."""
    closed = f"http://127.0.0.1:{closed_port()}/v1"
    env = {f"{name}_BASE_URL": closed for name in ("LMSTUDIO", "LLAMACPP", "VLLM", "OLLAMA")}
    if ollama is not None:
        del env["OLLAMA_BASE_URL"]
        env["OLLAMA_HOST"] = ollama
    return env


def section(result: Result, provider: str) -> list[str]:
    """The provider's header line and its model rows."""
    lines = result.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(provider + "  ["))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i]), len(lines))
    return lines[start:end]


def test_list_models_shows_a_local_servers_models_and_every_key_state(
    wire: WireServer, picode: PicodeEnv
) -> None:
    models = {
        "data": [
            {"id": "qwen3:8b", "context_length": 40960},
            {"id": "evil\x1b]52;c;aGk=\x07model"},
        ]
    }
    wire.enqueue(json_response(200, models))
    env = {
        **local_servers(ollama=f"127.0.0.1:{wire.port}"),
        "GROQ_API_KEY": "gsk-test",
        "ANTHROPIC_API_KEY": "sk-ant-test",
    }

    result = picode.run("--list-models", env=env)

    assert result.returncode == 0, result.stderr
    assert wire.requests[0].path == "/v1/models"
    header, *rows = section(result, "ollama")
    assert f"server found at http://127.0.0.1:{wire.port}/v1 (2 models)" in header
    assert "key: not needed" in header
    assert rows[0].split() == ["ollama/qwen3:8b", "40,960", "-", "-", "?"]
    # The server's id reaches the terminal spelled out, never as an escape sequence.
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "ollama/evil␛]52;c;aGk=\\x07model" in rows[1]
    lmstudio = section(result, "lmstudio")[0]
    assert "server not found (no server at http://127.0.0.1:" in lmstudio
    assert "key: set from GROQ_API_KEY" in section(result, "groq")[0]
    assert "key: missing, set CEREBRAS_API_KEY" in section(result, "cerebras")[0]
    assert "key: set from ANTHROPIC_API_KEY" in section(result, "anthropic")[0]
    azure = section(result, "azure-openai")[0]
    assert "endpoint: missing, set AZURE_OPENAI_ENDPOINT" in azure
    default = builtin_registry().default_model("anthropic")
    row = next(r for r in section(result, "anthropic") if r.split()[0] == default.ref)
    limits = [f"{default.context_window:,}", f"{default.max_tokens:,}"]
    assert row.split()[1:3] == limits
    # The thinking column says how the model takes a level (docs/models.md), not just yes.
    control = default.thinking
    assert control is not None
    assert f"{control.kind} {control.levels[0]}-{control.levels[-1]}" in row
    assert section(result, "vllm")[1] == "  (no models listed; any id works: --model vllm/<id>)"


def test_the_filter_is_a_case_insensitive_substring(wire: WireServer, picode: PicodeEnv) -> None:
    wire.enqueue(json_response(200, {"data": [{"id": "Zqx9-Coder"}, {"id": "llama3.2"}]}))
    env = local_servers(ollama=wire.url)

    result = picode.run("--list-models", "zQX9", env=env)

    assert result.returncode == 0, result.stderr
    rows = [line.split()[0] for line in result.stdout.splitlines() if line.startswith("  ")]
    assert rows[1:] == ["ollama/Zqx9-Coder"]  # after the column header
    assert "anthropic  [" not in result.stdout
    nothing = picode.run("--list-models", "no-such-model-anywhere", env=env)
    assert nothing.returncode == 0
    assert nothing.stdout == "No provider or model matches 'no-such-model-anywhere'.\n"


def test_a_malformed_models_list_is_said_in_the_list(wire: WireServer, picode: PicodeEnv) -> None:
    wire.enqueue(json_response(200, {"error": "not here"}))

    result = picode.run("--list-models", "ollama", env=local_servers(ollama=wire.url))

    assert result.returncode == 0, result.stderr
    (header, note) = section(result, "ollama")
    assert "server not found" in header and "did not answer a models list" in header
    assert note == "  (no models listed; any id works: --model ollama/<id>)"


def test_list_models_imports_no_sdk(picode: PicodeEnv) -> None:
    code = (
        "import json, sys\n"
        "from picode.cli import main\n"
        "code = main(['--list-models', 'anthropic/'])\n"
        f"print('HEAVY=' + json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
        "sys.exit(code)\n"
    )
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=picode.project,
        env={**picode.env, **local_servers()},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "HEAVY=[]"
    assert builtin_registry().default_model("anthropic").ref in done.stdout


def test_a_preset_works_by_its_key_variable_alone(wire: WireServer, picode: PicodeEnv) -> None:
    wire.enqueue(ChatStream().text("Hi from Groq.").end("stop").response())
    env = {"GROQ_API_KEY": "gsk-test-key", "GROQ_BASE_URL": wire.url + "/openai/v1"}

    result = picode.run("-p", "hello", "--model", "groq/llama-3.3-70b-versatile", env=env)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hi from Groq.\n"
    request = wire.requests[0]
    assert request.path == "/openai/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer gsk-test-key"
    assert json.loads(request.body)["model"] == "llama-3.3-70b-versatile"
    # An id picode's list lacks: one warning line naming the list and the config table.
    warnings = [line for line in result.stderr.splitlines() if "picode's model list" in line]
    assert len(warnings) == 1 and "[providers.groq]" in warnings[0]


def test_a_preset_without_its_key_fails_naming_the_variable(picode: PicodeEnv) -> None:
    result = picode.run("-p", "hello", "--model", "deepseek/deepseek-chat")

    assert result.returncode == 1
    assert "No API key for deepseek. Set DEEPSEEK_API_KEY" in result.stderr


def test_azure_without_an_endpoint_fails_before_any_request(picode: PicodeEnv) -> None:
    env = {"AZURE_OPENAI_API_KEY": "az-key"}

    result = picode.run("-p", "hello", "--model", "azure-openai/gpt-5", env=env)

    assert result.returncode == 1
    assert "No endpoint for azure-openai: set AZURE_OPENAI_ENDPOINT" in result.stderr


def test_azure_openai_by_its_endpoint_and_key(wire: WireServer, picode: PicodeEnv) -> None:
    reply = ResponsesStream().created().message(["Hi from Azure."]).completed(usage(10, 3))
    wire.enqueue(reply.response())
    env = {"AZURE_OPENAI_ENDPOINT": wire.url + "/", "AZURE_OPENAI_API_KEY": "az-test-key"}

    result = picode.run("-p", "hello", "--model", "azure-openai/my-gpt5-deployment", env=env)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hi from Azure.\n"
    request = wire.requests[0]
    assert request.path == "/openai/v1/responses"
    assert request.headers["authorization"] == "Bearer az-test-key"
    assert json.loads(request.body)["model"] == "my-gpt5-deployment"


def test_vertex_by_its_access_token_variable(wire: WireServer, picode: PicodeEnv) -> None:
    wire.enqueue(AnthropicStream().text("Hi from Vertex.").stop().response())
    env = {
        "ANTHROPIC_VERTEX_ACCESS_TOKEN": "ya29.test-token",
        "ANTHROPIC_VERTEX_BASE_URL": wire.url + "/v1",
        "ANTHROPIC_VERTEX_PROJECT_ID": "proj",
        "CLOUD_ML_REGION": "europe-west1",
    }

    result = picode.run("-p", "hello", "--model", "vertex/claude-sonnet-4-6", env=env)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hi from Vertex.\n"
    request = wire.requests[0]
    assert request.path == (
        "/v1/projects/proj/locations/europe-west1/publishers/anthropic/models/"
        "claude-sonnet-4-6:streamRawPredict"
    )
    assert request.headers["authorization"] == "Bearer ya29.test-token"


def test_without_any_key_the_error_points_at_list_models(picode: PicodeEnv) -> None:
    result = picode.run("-p", "hello")

    assert result.returncode == 1
    assert "No API key found" in result.stderr
    assert "picode --list-models lists them" in result.stderr


def test_a_local_servers_stated_context_is_used_for_an_unknown_id(
    wire: WireServer, picode: PicodeEnv
) -> None:
    wire.enqueue(
        json_response(200, {"data": [{"id": "Qwen/Qwen3-8B", "max_model_len": 40960}]}),
    )
    env = {**local_servers(), "VLLM_BASE_URL": wire.url + "/v1"}

    result = picode.run(
        "--mode",
        "rpc",
        "--model",
        "vllm/Qwen/Qwen3-8B",
        env=env,
        stdin=json.dumps({"type": "get_state", "id": "s"}) + "\n",
    )

    assert result.returncode == 0, result.stderr
    assert [r.path for r in wire.requests] == ["/v1/models"]
    assert "authorization" not in wire.requests[0].headers  # a local server needs no key
    state = next(line for line in result.json_lines() if line.get("id") == "s")["data"]
    assert state["model"]["context_window"] == 40960
    assert state["context_window"] == 40960
    warning = next(line for line in result.stderr.splitlines() if "model list" in line)
    assert "using the server's limits (40,960 context" in warning


def test_bedrock_and_vertex_say_which_login_they_see(picode: PicodeEnv) -> None:
    env = {**local_servers(), "AWS_PROFILE": "work"}

    result = picode.run("--list-models", "bedrock", env=env)
    vertex = picode.run("--list-models", "vertex", env=local_servers())

    assert result.returncode == 0, result.stderr
    assert "key: not set, login from AWS_PROFILE" in section(result, "bedrock")[0]
    header = section(vertex, "vertex")[0]
    assert "key: missing, set ANTHROPIC_VERTEX_ACCESS_TOKEN (or log in: " in header
