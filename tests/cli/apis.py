"""One scripted reply vocabulary over the four wire APIs, for driving the real executable.

Each driver knows how picode is pointed at the test server for its API (the SDK's base-URL
variable for built-in providers, a ``config.toml`` provider for OpenAI-compatible servers)
and how that API spells a text reply, a tool call, an HTTP error and a stream that stops
half-way. The CLI tests then read the same for every API.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tests.cli.harness import PicodeEnv
from tests.wire import gemini_protocol as gemini
from tests.wire.anthropic_protocol import AnthropicStream, anthropic_error
from tests.wire.chat_protocol import ChatStream, chat_error
from tests.wire.responses_protocol import ResponsesStream, usage
from tests.wire.server import Chunk, WireResponse, WireServer

LOCAL_PROVIDER_CONFIG = """
[providers.local]
api = "openai-completions"
base_url = "{url}/v1"

[[providers.local.models]]
id = "test-model"
context_window = 32768
max_tokens = 4096
"""


def split_json(args: dict[str, Any], pieces: int = 3) -> list[str]:
    """Tool arguments as a few streamed pieces, cut anywhere, like real servers do."""
    text = json.dumps(args)
    step = max(1, len(text) // pieces)
    return [text[i : i + step] for i in range(0, len(text), step)]


class ApiDriver:
    name: str = ""
    model: str = ""
    key_env: str | None = None
    url_env: str | None = None
    url_suffix: str = ""

    def environment(self, wire: WireServer) -> dict[str, str]:
        env: dict[str, str] = {}
        if self.key_env:
            env[self.key_env] = "test-key"
        if self.url_env:
            env[self.url_env] = wire.url + self.url_suffix
        return env

    def config(self, wire: WireServer) -> str:
        return ""

    def text(self, *pieces: str) -> WireResponse:
        raise NotImplementedError

    def tool_call(self, call_id: str, name: str, args: dict[str, Any]) -> WireResponse:
        return self.raw_tool_call(call_id, name, split_json(args))

    def raw_tool_call(self, call_id: str, name: str, pieces: Sequence[str]) -> WireResponse:
        raise NotImplementedError

    def error(
        self, status: int, message: str, headers: dict[str, str] | None = None
    ) -> WireResponse:
        raise NotImplementedError

    def text_then(self, piece: str, chunk: Chunk) -> WireResponse:
        """Start a text reply, send ``piece``, then ``chunk`` (``Stall``, ``Cut``, bytes)."""
        raise NotImplementedError


class AnthropicDriver(ApiDriver):
    name = "anthropic-messages"
    model = "anthropic/claude-sonnet-4-5"
    key_env = "ANTHROPIC_API_KEY"
    url_env = "ANTHROPIC_BASE_URL"

    def text(self, *pieces: str) -> WireResponse:
        return AnthropicStream().text(*pieces).stop().response()

    def raw_tool_call(self, call_id: str, name: str, pieces: Sequence[str]) -> WireResponse:
        return AnthropicStream().tool_use(call_id, name, pieces).stop("tool_use").response()

    def error(
        self, status: int, message: str, headers: dict[str, str] | None = None
    ) -> WireResponse:
        kind = {401: "authentication_error", 429: "rate_limit_error", 529: "overloaded_error"}
        return anthropic_error(status, kind.get(status, "api_error"), message, headers)

    def text_then(self, piece: str, chunk: Chunk) -> WireResponse:
        return AnthropicStream().text(piece, stop=False).chunk(chunk).response()


class ResponsesDriver(ApiDriver):
    name = "openai-responses"
    model = "openai/gpt-5"
    key_env = "OPENAI_API_KEY"
    url_env = "OPENAI_BASE_URL"
    url_suffix = "/v1"

    def text(self, *pieces: str) -> WireResponse:
        stream = ResponsesStream().created().message(list(pieces))
        return stream.completed(usage(20, 5)).response()

    def raw_tool_call(self, call_id: str, name: str, pieces: Sequence[str]) -> WireResponse:
        stream = ResponsesStream().created().function_call(name, list(pieces), call_id=call_id)
        return stream.completed(usage(20, 5)).response()

    def error(
        self, status: int, message: str, headers: dict[str, str] | None = None
    ) -> WireResponse:
        return chat_error(status, message, headers)

    def text_then(self, piece: str, chunk: Chunk) -> WireResponse:
        stream = ResponsesStream().created().message([piece], stop_after_deltas=True)
        return stream.raw(chunk).response()


class ChatDriver(ApiDriver):
    """An OpenAI-compatible local server, configured as a custom provider."""

    name = "openai-completions"
    model = "local/test-model"

    def config(self, wire: WireServer) -> str:
        return LOCAL_PROVIDER_CONFIG.format(url=wire.url)

    def text(self, *pieces: str) -> WireResponse:
        return ChatStream().text(*pieces).end().response()

    def raw_tool_call(self, call_id: str, name: str, pieces: Sequence[str]) -> WireResponse:
        return ChatStream().tool_call(0, call_id, name, pieces).end("tool_calls").response()

    def error(
        self, status: int, message: str, headers: dict[str, str] | None = None
    ) -> WireResponse:
        return chat_error(status, message, headers)

    def text_then(self, piece: str, chunk: Chunk) -> WireResponse:
        return ChatStream().text(piece).chunk(chunk).response()


class GeminiDriver(ApiDriver):
    name = "google-generative-ai"
    model = "google/gemini-2.5-flash"
    key_env = "GEMINI_API_KEY"
    url_env = "GOOGLE_GEMINI_BASE_URL"

    def text(self, *pieces: str) -> WireResponse:
        stream = gemini.GeminiStream()
        for piece in pieces[:-1]:
            stream.chunk(gemini.text(piece))
        stream.chunk(gemini.text(pieces[-1]), finish="STOP", usage_=gemini.usage(20, 5))
        return stream.response()

    def tool_call(self, call_id: str, name: str, args: dict[str, Any]) -> WireResponse:
        part = gemini.function_call(name, args, call_id=call_id)
        stream = gemini.GeminiStream().chunk(part, finish="STOP", usage_=gemini.usage(20, 5))
        return stream.response()

    def raw_tool_call(self, call_id: str, name: str, pieces: Sequence[str]) -> WireResponse:
        raise NotImplementedError("Gemini sends function calls whole, never as argument text")

    def error(
        self, status: int, message: str, headers: dict[str, str] | None = None
    ) -> WireResponse:
        state = {401: "UNAUTHENTICATED", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}
        return gemini.api_error(status, message, state.get(status, "INTERNAL"), headers)

    def text_then(self, piece: str, chunk: Chunk) -> WireResponse:
        return gemini.GeminiStream().chunk(gemini.text(piece)).raw(chunk).response()


DRIVERS: list[ApiDriver] = [AnthropicDriver(), ResponsesDriver(), ChatDriver(), GeminiDriver()]


def use(api: ApiDriver, wire: WireServer, picode: PicodeEnv) -> ApiDriver:
    """Point picode at the test server for ``api``."""
    picode.env.update(api.environment(wire))
    config = api.config(wire)
    if config:
        picode.add_config(config)
    return api


def large_write(api: ApiDriver, path: str = "out/big.txt") -> tuple[WireResponse, str]:
    """A ``write`` call of over 200 kB (multi-byte text and emoji), its arguments streamed in
    128-character pieces; and the content the file must end up with."""
    content = "".join(f"line {i:06d} नमस्ते 🙂 {'x' * 40}\n" for i in range(3200))
    assert len(content.encode()) > 200_000
    text = json.dumps({"path": path, "content": content}, ensure_ascii=False)
    pieces = [text[i : i + 128] for i in range(0, len(text), 128)]
    return api.raw_tool_call("call_w", "write", pieces), content
