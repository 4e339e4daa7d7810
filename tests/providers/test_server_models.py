"""``GET /v1/models`` of OpenAI-compatible servers, read against the wire server."""

from __future__ import annotations

import json
import socket
import time

import pytest

from picode.ai.server_models import (
    ServerModel,
    ServerModelsError,
    fetch_server_models,
    parse_models,
    probe_servers,
)
from tests.wire.server import Stall, WireResponse, WireServer, json_response

#: Shapes of real servers' answers, trimmed to the fields picode reads.
OPENROUTER = {
    "data": [
        {
            "id": "qwen/qwen3-coder",
            "context_length": 262144,
            "top_provider": {"context_length": 262144, "max_completion_tokens": 65536},
            "pricing": {"prompt": "0.00000022", "completion": "0.00000095"},
        }
    ]
}
VLLM = {
    "object": "list",
    "data": [{"id": "Qwen/Qwen3-8B", "object": "model", "max_model_len": 32768}],
}
LLAMACPP = {
    "object": "list",
    "data": [{"id": "gpt-oss-20b", "meta": {"n_ctx": 16384, "n_ctx_train": 131072}}],
}
OLLAMA = {"object": "list", "data": [{"id": "qwen3:8b", "object": "model", "owned_by": "library"}]}


def closed_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_limits_and_prices_come_from_each_servers_own_fields() -> None:
    (router,) = parse_models(json.dumps(OPENROUTER).encode())
    assert router == ServerModel(
        "qwen/qwen3-coder", 262144, 65536, (("input", 0.22), ("output", 0.95))
    )
    (vllm,) = parse_models(json.dumps(VLLM).encode())
    assert (vllm.id, vllm.context_window, vllm.max_tokens) == ("Qwen/Qwen3-8B", 32768, None)
    (llama,) = parse_models(json.dumps(LLAMACPP).encode())
    # The context the server runs with, not the one the model was trained for.
    assert llama.context_window == 16384
    (ollama,) = parse_models(json.dumps(OLLAMA).encode())
    assert ollama == ServerModel("qwen3:8b")


@pytest.mark.parametrize(
    "body",
    [b"<html>not json</html>", b'{"object": "list"}', b'{"data": {"id": "x"}}', b"[]"],
    ids=["html", "no data", "data not a list", "a bare list"],
)
def test_a_malformed_answer_is_a_clear_error(body: bytes) -> None:
    with pytest.raises(ServerModelsError) as info:
        parse_models(body, "http://h/v1/models")
    assert "http://h/v1/models" in str(info.value)


def test_entries_without_an_id_or_with_bad_counts_are_skipped() -> None:
    body = (
        b'{"data": [{"object": "model"}, {"id": ""}, {"id": 5}, "x",'
        b' {"id": "ok", "context_length": true, "max_model_len": -1},'
        b' {"id": "ok"}]}'
    )
    assert parse_models(body) == [ServerModel("ok")]


def test_fetch_asks_the_models_path_with_the_key(wire: WireServer) -> None:
    wire.enqueue(json_response(200, VLLM))
    models = fetch_server_models(wire.url + "/v1/", api_key="sk-local")
    assert [m.id for m in models] == ["Qwen/Qwen3-8B"]
    request = wire.requests[0]
    assert (request.method, request.path) == ("GET", "/v1/models")
    assert request.headers["authorization"] == "Bearer sk-local"


def test_fetch_without_a_key_sends_no_authorization(wire: WireServer) -> None:
    wire.enqueue(json_response(200, OLLAMA))
    fetch_server_models(wire.url + "/v1")
    assert "authorization" not in wire.requests[0].headers


def test_an_http_error_names_the_status(wire: WireServer) -> None:
    wire.enqueue(json_response(401, {"error": "no"}))
    with pytest.raises(ServerModelsError, match="HTTP 401"):
        fetch_server_models(wire.url + "/v1")


def test_a_closed_port_is_no_server() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    with pytest.raises(ServerModelsError) as info:
        fetch_server_models(url)
    assert str(info.value) == f"no server at {url}/models (connection refused)"


def test_a_silent_server_times_out_quickly(wire: WireServer) -> None:
    wire.enqueue(WireResponse(200, [Stall()], content_type="application/json"))
    started = time.monotonic()
    with pytest.raises(ServerModelsError, match=r"did not answer within 0\.3 s"):
        fetch_server_models(wire.url + "/v1", timeout=0.3)
    assert time.monotonic() - started < 3


def test_servers_are_probed_at_once(wire: WireServer) -> None:
    # Three silent servers and a closed port: the probe takes one timeout (0.6 s), where
    # one after the other would take three (1.8 s).
    others = [WireServer().start(), WireServer().start()]
    try:
        for server in (wire, *others):
            server.enqueue(WireResponse(200, [Stall()], content_type="application/json"))
        targets = {
            name: (server.url + "/v1", None, 0.6)
            for name, server in zip("abc", (wire, *others), strict=True)
        }
        targets["d"] = (f"http://127.0.0.1:{closed_port()}/v1", None, 0.6)
        started = time.monotonic()
        results = probe_servers(targets)
        elapsed = time.monotonic() - started
    finally:
        for server in others:
            server.stop()
    assert all(isinstance(result, ServerModelsError) for result in results.values())
    assert list(results) == ["a", "b", "c", "d"]
    assert elapsed < 1.5
