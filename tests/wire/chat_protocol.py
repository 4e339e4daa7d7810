"""OpenAI Chat Completions streaming bodies, built the way compatible servers send them.

Each chunk is one ``data: {chat.completion.chunk}`` event; the finish reason rides on the
last choice chunk, usage (with ``stream_options.include_usage``) on a chunk with empty
``choices``, and the stream ends with ``data: [DONE]``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tests.wire.server import Chunk, WireResponse, json_response, sse


class ChatStream:
    """Fluent builder of one streamed chat completion; each chunk becomes one body chunk."""

    def __init__(self, *, model: str = "test-model", completion_id: str = "chatcmpl-test") -> None:
        self.model = model
        self.completion_id = completion_id
        self.chunks: list[Chunk] = []
        self.choice({"role": "assistant", "content": ""})

    # --- raw -------------------------------------------------------------------------

    def data(self, payload: Any) -> ChatStream:
        self.chunks.append(sse(None, payload))
        return self

    def chunk(self, chunk: Chunk) -> ChatStream:
        """Insert a raw chunk (``Pause``, ``Cut``, ``Stall`` or bytes)."""
        self.chunks.append(chunk)
        return self

    def envelope(self, choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        return {
            "id": self.completion_id,
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": self.model,
            "system_fingerprint": "fp_test",
            "choices": choices,
            **extra,
        }

    def choice(self, delta: dict[str, Any], finish_reason: str | None = None) -> ChatStream:
        return self.data(
            self.envelope(
                [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]
            )
        )

    # --- content ---------------------------------------------------------------------

    def text(self, *pieces: str) -> ChatStream:
        for piece in pieces:
            self.choice({"content": piece})
        return self

    def reasoning(self, *pieces: str, field: str = "reasoning_content") -> ChatStream:
        for piece in pieces:
            self.choice({"content": None, field: piece})
        return self

    def tool_call(
        self,
        index: int,
        call_id: str | None,
        name: str,
        argument_pieces: Sequence[str] = (),
    ) -> ChatStream:
        """First fragment carries id and name; later ones only argument text."""
        first: dict[str, Any] = {
            "index": index,
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        if call_id is not None:
            first["id"] = call_id
        self.choice({"tool_calls": [first]})
        for piece in argument_pieces:
            self.choice({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        return self

    # --- endings ---------------------------------------------------------------------

    def finish(self, reason: str | None = "stop") -> ChatStream:
        return self.choice({}, reason)

    def usage(
        self,
        prompt_tokens: int = 30,
        completion_tokens: int = 12,
        *,
        cached_tokens: int | None = None,
    ) -> ChatStream:
        usage: dict[str, Any] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if cached_tokens is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
        return self.data(self.envelope([], usage=usage))

    def done(self) -> ChatStream:
        self.chunks.append("data: [DONE]\n\n")
        return self

    def end(self, reason: str | None = "stop", **usage: Any) -> ChatStream:
        """The usual ending: finish reason, usage chunk, ``[DONE]``."""
        return self.finish(reason).usage(**usage).done()

    def error(
        self, message: str, *, code: Any = None, error_type: str = "server_error"
    ) -> ChatStream:
        return self.data({"error": {"message": message, "type": error_type, "code": code}})

    # --- output ----------------------------------------------------------------------

    def body(self) -> list[Chunk]:
        return list(self.chunks)

    def response(self, headers: dict[str, str] | None = None) -> WireResponse:
        return WireResponse(body=self.body(), headers=headers or {})

    def bytes_split(self, size: int) -> WireResponse:
        """The whole body re-cut into ``size``-byte chunks (splitting UTF-8 sequences)."""
        joined = "".join(c for c in self.chunks if isinstance(c, str)).encode("utf-8")
        pieces: list[Chunk] = [joined[i : i + size] for i in range(0, len(joined), size)]
        return WireResponse(body=pieces)


def chat_error(
    status: int, message: str, headers: dict[str, str] | None = None, *, code: Any = None
) -> WireResponse:
    """A non-2xx reply with OpenAI's error body."""
    payload = {"error": {"message": message, "type": "invalid_request_error", "code": code}}
    return json_response(status, payload, headers)


def decode_data_lines(body: bytes) -> list[Any]:
    """The JSON payloads (or ``"[DONE]"``) of a data-only SSE body."""
    out: list[Any] = []
    for line in body.decode("utf-8").splitlines():
        if line.startswith("data: "):
            payload = line[len("data: ") :]
            out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out
