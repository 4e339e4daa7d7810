"""google-generative-ai through the real google-genai SDK against a wire-faithful local server."""

from __future__ import annotations

import base64
import json
import os
import ssl
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from picode.ai.errors import CONNECTION_LOST, TIMED_OUT
from picode.ai.events import StartEvent
from picode.ai.providers.google_generative_ai import SYNTHETIC_ID_PREFIX
from picode.ai.types import Context, TextContent, ThinkingContent, ToolCall, UserMessage
from tests.providers.models import READ_TOOL, wire_model
from tests.providers.sdk_streaming import (
    TEXT,
    THINKING,
    TOOL_CALL,
    halved,
    run,
    simple_context,
    stream_once,
)
from tests.wire.gemini_protocol import GeminiStream, api_error, function_call, text, usage
from tests.wire.server import Cut, Stall, WireServer, sse

gemini = partial(wire_model, "google-generative-ai")
SIG_A = base64.b64encode(b"signature-a").decode()
SIG_B = base64.b64encode(b"signature-b").decode()
SIG_C = base64.b64encode(b"signature-c").decode()


def camel(value: Any) -> Any:
    """JSON with camelCase keys: the API takes both spellings and the SDK sends a mix."""
    if isinstance(value, dict):
        return {_camel_key(k): camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [camel(v) for v in value]
    return value


def _camel_key(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(word.capitalize() for word in rest)


# --- happy paths ------------------------------------------------------------------------


def test_text_reply_events_usage_and_request(wire: WireServer) -> None:
    script = GeminiStream(response_id="r-7").chunk(text("Hel")).chunk(text("lo"))
    script.chunk(text(" there"), finish="STOP", usage_=usage(1000, 30, thoughts=10, cached=400))
    wire.enqueue(script.response())

    outcome = stream_once(gemini(wire))

    assert outcome.shape == ["start", *TEXT, "done"]
    message = outcome.message
    assert message.content == [TextContent("Hello there")]
    assert message.stop_reason == "stop"
    assert message.response_id == "r-7"
    usage_ = message.usage
    assert (usage_.input, usage_.output, usage_.cache_read) == (600, 40, 400)
    assert usage_.cost.total == pytest.approx((600 * 1 + 40 * 4 + 400 * 0.25) / 1e6)
    assert not usage_.estimated

    request = wire.requests[0]
    assert request.method == "POST"
    assert request.path.endswith("/models/gemini-test:streamGenerateContent?alt=sse")
    assert request.headers["x-goog-api-key"] == "test-key"
    body = request.json
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Hello"}]}]
    assert body["systemInstruction"]["parts"] == [{"text": "Be brief."}]
    assert "thinkingConfig" not in body["generationConfig"]
    assert len(wire.requests) == 1


def test_thinking_then_text_with_signatures_on_their_blocks(wire: WireServer) -> None:
    script = GeminiStream()
    script.chunk(text("Let me ", thought=True))
    script.chunk(text("think.", thought=True, signature=SIG_A))
    script.chunk(text("Answer", signature=SIG_B))
    script.chunk(text("!"), finish="STOP", usage_=usage(10, 2, thoughts=5))
    wire.enqueue(script.response())

    outcome = stream_once(gemini(wire), thinking="medium")

    assert outcome.shape == ["start", *THINKING, *TEXT, "done"]
    assert outcome.message.content == [
        ThinkingContent("Let me think.", SIG_A),
        TextContent("Answer!", SIG_B),
    ]
    thinking_config = camel(wire.requests[0].json["generationConfig"]["thinkingConfig"])
    assert thinking_config == {"includeThoughts": True, "thinkingBudget": 8192}


def test_signatures_in_either_base64_alphabet_are_kept_and_sent_back(wire: WireServer) -> None:
    """Bytes on the wire are base64 in either alphabet; picode keeps the standard one."""
    raw = b"\xfb\xff\xfe-sig"
    url_safe = base64.urlsafe_b64encode(raw).decode()
    assert url_safe != base64.b64encode(raw).decode()  # the two alphabets differ here
    script = GeminiStream().chunk(text("thought", thought=True, signature=url_safe))
    script.chunk(text("Answer", signature="!not base64!"), finish="STOP")
    wire.enqueue(script.response())

    reply = stream_once(gemini(wire), thinking="medium").message

    assert reply.content == [
        ThinkingContent("thought", base64.b64encode(raw).decode()),
        TextContent("Answer"),
    ]
    wire.enqueue(GeminiStream().chunk(text("ok"), finish="STOP").response())
    history = Context(messages=[UserMessage("Hello"), reply, UserMessage("Again")])
    stream_once(gemini(wire), history, thinking="medium")
    sent = wire.requests[1].json["contents"][1]["parts"]
    assert base64.urlsafe_b64decode(sent[0]["thoughtSignature"]) == raw


def test_alternating_parts_open_a_new_block_each_time(wire: WireServer) -> None:
    script = GeminiStream()
    script.chunk(text("a", thought=True), text("b"), text("c", thought=True))
    script.chunk(text("d"), finish="STOP")
    wire.enqueue(script.response())

    outcome = stream_once(gemini(wire))

    kinds = [type(block).__name__ for block in outcome.message.content]
    assert kinds == ["ThinkingContent", "TextContent", "ThinkingContent", "TextContent"]
    assert outcome.shape.count("thinking_end") == 2
    assert outcome.shape.count("text_end") == 2


def test_function_call_is_complete_at_once(wire: WireServer) -> None:
    script = GeminiStream().chunk(text("Reading."))
    script.chunk(
        function_call("read", {"path": "src/main.py"}, call_id="fc-1", signature=SIG_C),
        finish="STOP",
    )
    wire.enqueue(script.response())

    outcome = stream_once(gemini(wire), simple_context(tools=[READ_TOOL]))

    assert outcome.shape == ["start", *TEXT, *TOOL_CALL, "done"]
    assert outcome.terminal.reason == "toolUse"
    assert outcome.message.tool_calls == [ToolCall("fc-1", "read", {"path": "src/main.py"}, SIG_C)]
    assert outcome.deltas(1) == '{"path": "src/main.py"}'
    declaration = camel(wire.requests[0].json["tools"][0]["functionDeclarations"][0])
    assert declaration == {
        "name": "read",
        "description": "Read a file",
        "parametersJsonSchema": READ_TOOL.parameters,
    }


def test_parallel_same_name_calls_without_ids_get_distinct_ids(wire: WireServer) -> None:
    script = GeminiStream().chunk(
        function_call("read", {"path": "a.py"}),
        function_call("read", {"path": "b.py"}),
        function_call("read"),
        finish="STOP",
    )
    wire.enqueue(script.response())

    outcome = stream_once(gemini(wire), simple_context(tools=[READ_TOOL]))

    calls = outcome.message.tool_calls
    assert [call.arguments for call in calls] == [{"path": "a.py"}, {"path": "b.py"}, {}]
    ids = [call.id for call in calls]
    assert len(set(ids)) == 3
    assert all(call_id.startswith(SYNTHETIC_ID_PREFIX) for call_id in ids)
    assert outcome.message.stop_reason == "toolUse"


def test_repeated_server_ids_are_made_unique(wire: WireServer) -> None:
    script = GeminiStream().chunk(
        function_call("read", {"path": "a"}, call_id="same"),
        function_call("read", {"path": "b"}, call_id="same"),
        finish="STOP",
    )
    wire.enqueue(script.response())

    outcome = stream_once(gemini(wire), simple_context(tools=[READ_TOOL]))

    ids = [call.id for call in outcome.message.tool_calls]
    assert ids[0] == "same"
    assert ids[1] != "same"


def test_unicode_survives_bytes_split_inside_characters(wire: WireServer) -> None:
    reply = "हिन्दी में जवाब 🙂👍🏾 done"
    script = GeminiStream().chunk(text(reply[:6])).chunk(text(reply[6:]), finish="STOP")
    wire.enqueue(halved(script.chunks))

    outcome = stream_once(gemini(wire), simple_context("नमस्ते 😀"))

    assert outcome.message.text == reply
    assert wire.requests[0].json["contents"][0]["parts"][0]["text"] == "नमस्ते 😀"


# --- finish reasons ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("finish", "reason", "error_part"),
    [
        ("STOP", "stop", None),
        ("MAX_TOKENS", "length", None),
        ("FINISH_REASON_UNSPECIFIED", "stop", None),
        ("SAFETY", "error", "safety filters (finish reason SAFETY)"),
        ("RECITATION", "error", "recited source material (finish reason RECITATION)"),
        ("PROHIBITED_CONTENT", "error", "prohibited content"),
        ("BLOCKLIST", "error", "blocklisted term"),
        ("SPII", "error", "sensitive personal information"),
        ("MALFORMED_FUNCTION_CALL", "error", "malformed function call"),
        ("OTHER", "error", "unspecified reason"),
        ("SOMETHING_NEW_2031", "stop", None),
    ],
)
def test_finish_reasons_map_to_stop_reasons(
    wire: WireServer, finish: str, reason: str, error_part: str | None
) -> None:
    script = GeminiStream().chunk(text("partial")).chunk(finish=finish, usage_=usage(5, 1))
    wire.enqueue(script.response())

    outcome = stream_once(gemini(wire))

    assert outcome.terminal.reason == reason
    assert outcome.message.text == "partial"
    if error_part is None:
        assert outcome.message.error_message is None
        assert outcome.message.stop_reason == reason
    else:
        assert error_part in (outcome.message.error_message or "")
        assert outcome.message.stop_reason == "error"


def test_blocked_prompt_is_an_error(wire: WireServer) -> None:
    wire.enqueue(GeminiStream().blocked("SAFETY", "Unsafe request").response())

    outcome = stream_once(gemini(wire))

    assert outcome.shape == ["start", "error"]
    assert outcome.message.stop_reason == "error"
    assert outcome.message.error_message == (
        "The prompt was blocked by Gemini (block reason SAFETY): Unsafe request"
    )
    assert outcome.message.usage.input == 12


def test_stream_without_finish_reason_is_an_error(wire: WireServer) -> None:
    wire.enqueue(GeminiStream().chunk(text("cut")).chunk(text(" short")).response())

    outcome = stream_once(gemini(wire))

    assert outcome.terminal.reason == "error"
    assert outcome.message.text == "cut short"
    assert "ended" in (outcome.message.error_message or "")


# --- failures ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (
            api_error(400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT"),
            "400 Bad request: API key not valid. Please pass a valid API key.",
        ),
        (
            api_error(401, "Request had invalid authentication credentials.", "UNAUTHENTICATED"),
            "401 Unauthorized (check the API key): Request had invalid authentication credentials.",
        ),
        (
            api_error(404, "models/gemini-test is not found", "NOT_FOUND"),
            "404 Not found (check the model id and base URL): models/gemini-test is not found",
        ),
        (
            api_error(
                429,
                "Resource has been exhausted (e.g. check quota).",
                "RESOURCE_EXHAUSTED",
                details=[
                    {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "17s"}
                ],
            ),
            "429 Rate limited: Resource has been exhausted (e.g. check quota). (retry after 17 s)",
        ),
        (
            api_error(429, "Quota exceeded", "RESOURCE_EXHAUSTED", headers={"retry-after": "4"}),
            "429 Rate limited: Quota exceeded (retry after 4 s)",
        ),
        (
            api_error(500, "Internal error encountered.", "INTERNAL"),
            "500 Server error: Internal error encountered.",
        ),
        (
            api_error(503, "The model is overloaded.", "UNAVAILABLE"),
            "503 Service unavailable: The model is overloaded.",
        ),
        (api_error(529, "Overloaded", "UNAVAILABLE"), "529 Overloaded"),
    ],
    ids=["400", "401", "404", "429-retry-info", "429-header", "500", "503", "529"],
)
def test_http_errors_before_the_stream_give_one_error_event(
    wire: WireServer, response: Any, expected: str
) -> None:
    wire.enqueue(response)

    outcome = stream_once(gemini(wire))

    assert outcome.shape == ["error"]
    assert not any(isinstance(e, StartEvent) for e in outcome.events)
    assert outcome.message.error_message == expected
    assert outcome.message.content == []
    assert len(wire.requests) == 1  # the SDK does not retry


def test_error_chunk_mid_stream_keeps_partial_content(wire: WireServer) -> None:
    script = GeminiStream().chunk(text("Half "))
    script.error(503, "The service is currently unavailable.", "UNAVAILABLE")
    wire.enqueue(script.response())

    outcome = stream_once(gemini(wire))

    assert outcome.terminal.reason == "error"
    assert outcome.message.text == "Half "
    assert outcome.message.error_message == (
        "503 Service unavailable: The service is currently unavailable."
    )
    assert outcome.shape[-1] == "error"
    assert outcome.shape.count("error") == 1


@pytest.mark.parametrize(
    "error",
    [{"message": "Upstream went away", "status": "UNAVAILABLE"}, "Upstream went away"],
    ids=["without-code", "text"],
)
def test_error_chunk_in_another_shape_is_an_error_with_its_text(
    wire: WireServer, error: Any
) -> None:
    """A gateway in front of Gemini may send an error chunk without Google's code."""
    script = GeminiStream().chunk(text("Half ")).raw(sse(None, {"error": error}))
    wire.enqueue(script.response())

    outcome = stream_once(gemini(wire))

    assert outcome.terminal.reason == "error"
    assert outcome.message.text == "Half "
    assert "Upstream went away" in (outcome.message.error_message or "")
    assert outcome.shape.count("error") == 1


def test_cut_connection_keeps_partial_content(wire: WireServer) -> None:
    wire.enqueue(GeminiStream().chunk(text("Some ")).chunk(text("text")).raw(Cut()).response())

    outcome = stream_once(gemini(wire))

    assert outcome.terminal.reason == "error"
    assert outcome.message.text == "Some text"
    assert (outcome.message.error_message or "").startswith(CONNECTION_LOST)
    assert outcome.message.usage.estimated


def test_idle_timeout_fails_a_silent_stream(wire: WireServer) -> None:
    wire.enqueue(GeminiStream().chunk(text("waiting")).raw(Stall()).response())

    outcome = stream_once(gemini(wire), idle_timeout=0.3)

    assert outcome.terminal.reason == "error"
    assert (outcome.message.error_message or "").startswith(TIMED_OUT)
    assert outcome.message.text == "waiting"
    # The server-side deadline is not tied to the idle timeout.
    assert wire.requests[0].headers["x-server-timeout"] == "3600"


def test_missing_api_key_names_the_variables(
    wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)

    outcome = stream_once(gemini(wire), api_key=None)

    assert outcome.shape == ["error"]
    assert "GEMINI_API_KEY" in (outcome.message.error_message or "")
    assert wire.requests == []


# --- the client --------------------------------------------------------------------------


def _ca_loads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Every CA bundle an SSL context loads from now on, with its arguments."""
    loads: list[tuple[Any, ...]] = []
    load = ssl.SSLContext.load_verify_locations

    def counted(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        loads.append((*args, *kwargs.values()))
        load(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    return loads


def _build_client(wire: WireServer) -> None:
    from picode.ai.options import StreamOptions
    from picode.ai.providers import google_generative_ai

    async def build() -> None:
        await google_generative_ai.prepare(gemini(wire), StreamOptions(api_key="test-key"))

    run(build)


def test_the_client_loads_the_ca_bundle_once(
    wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK would build a second SSL context for websockets, which picode never opens."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    loads = _ca_loads(monkeypatch)
    _build_client(wire)
    assert len(loads) == 1


def test_the_client_still_takes_ssl_cert_file(
    wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import certifi

    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    loads = _ca_loads(monkeypatch)
    _build_client(wire)
    assert len(loads) == 1 and certifi.where() in loads[0]


def _api_clients(options: Any) -> tuple[Any, Any]:
    """picode's API client and the one ``genai.Client`` builds, from equal options."""
    from google import genai

    from picode.ai.providers._google_post import api_client

    ours = api_client("test-key", options())
    theirs = genai.Client(api_key="test-key", vertexai=False, http_options=options())
    return ours, theirs.aio._api_client


@pytest.mark.parametrize("base_url", ["given", "from the environment"])
def test_the_api_client_is_the_one_genai_client_builds(
    wire: WireServer, monkeypatch: pytest.MonkeyPatch, base_url: str
) -> None:
    from google.genai import types

    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", wire.url)
    monkeypatch.delenv("GOOGLE_GENAI_CLIENT_MODE", raising=False)

    def options() -> Any:
        return types.HttpOptions(
            base_url=wire.url if base_url == "given" else None,
            api_version="v1beta",
            headers={"X-Server-Timeout": "3600"},
            timeout=5000,
            retry_options=types.HttpRetryOptions(attempts=1),
        )

    ours, theirs = _api_clients(options)
    assert type(ours) is type(theirs)
    assert ours._http_options == theirs._http_options
    sent = [
        api._build_request("post", "models/gemini-test:streamGenerateContent?alt=sse", {}, None)
        for api in (ours, theirs)
    ]
    assert sent[0].url == sent[1].url and sent[0].url.startswith(wire.url)
    assert sent[0].headers == sent[1].headers
    assert sent[0].timeout == sent[1].timeout


_FIRST_REQUEST = """
import json, sys, types
from pathlib import Path
from picode.ai import sliced_module
sliced_module.set_cache_dir(Path(sys.argv[1]))
from tests.providers.models import wire_model
from tests.providers.sdk_streaming import stream_once
outcome = stream_once(wire_model("google-generative-ai", types.SimpleNamespace(url=sys.argv[2])))
genai_types = sys.modules["google.genai.types"]
slices = vars(genai_types).get("__getattr__")
print(json.dumps({
    "text": outcome.message.text,
    "loaded": [m for m in ("google.genai.client", "google.genai.models") if m in sys.modules],
    "sliced": getattr(slices, "whole", None) is False,
    "names": len(vars(genai_types)),
}))
"""


def test_a_first_request_runs_a_slice_of_the_sdk(wire: WireServer, tmp_path: Path) -> None:
    """With the index of ``google.genai.types`` cached: no client module of any API, and a
    fraction of the types."""
    import google.genai.types as shipped

    from picode.ai.slice_index import write
    from picode.ai.sliced_module import index_path

    assert shipped.__file__ is not None
    write(os.path.abspath(shipped.__file__), str(index_path(tmp_path, "google.genai.types")))
    wire.enqueue(GeminiStream().chunk(text("Hi"), finish="STOP").response())
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_REQUEST, str(tmp_path), wire.url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["text"] == "Hi"
    assert found["loaded"] == []
    assert found["sliced"] is True
    assert found["names"] < len(vars(shipped)) / 10
    assert len(wire.requests) == 1
