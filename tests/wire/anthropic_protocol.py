"""Anthropic Messages streaming bodies, built the way the real service sends them.

Every event is an ``event: <type>`` line plus a ``data: <json>`` line; a stream opens with
``message_start``, carries content blocks (start, deltas, stop), the occasional ``ping``,
and ends with ``message_delta`` (stop reason, cumulative usage) and ``message_stop``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tests.wire.server import Chunk, WireResponse, json_response, sse


class AnthropicStream:
    """Fluent builder of one streamed reply; each SSE event becomes one body chunk."""

    def __init__(
        self,
        *,
        model: str = "claude-test",
        message_id: str = "msg_test_01",
        input_tokens: int = 12,
        cache_read: int = 0,
        cache_write: int = 0,
        start_output_tokens: int = 1,
    ) -> None:
        self.chunks: list[Chunk] = []
        self._index = 0
        self.event(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": input_tokens,
                        "cache_creation_input_tokens": cache_write,
                        "cache_read_input_tokens": cache_read,
                        "output_tokens": start_output_tokens,
                    },
                },
            },
        )

    # --- raw -------------------------------------------------------------------------

    def event(self, name: str, data: Any) -> AnthropicStream:
        self.chunks.append(sse(name, data))
        return self

    def chunk(self, chunk: Chunk) -> AnthropicStream:
        """Insert a raw chunk (``Pause``, ``Cut``, ``Stall`` or bytes)."""
        self.chunks.append(chunk)
        return self

    def ping(self) -> AnthropicStream:
        return self.event("ping", {"type": "ping"})

    # --- blocks ----------------------------------------------------------------------

    def block_start(self, content_block: dict[str, Any]) -> int:
        index = self._index
        self._index += 1
        self.event(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": content_block},
        )
        return index

    def delta(self, index: int, delta: dict[str, Any]) -> AnthropicStream:
        return self.event(
            "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        )

    def block_stop(self, index: int) -> AnthropicStream:
        return self.event("content_block_stop", {"type": "content_block_stop", "index": index})

    def text(self, *pieces: str, stop: bool = True) -> AnthropicStream:
        index = self.block_start({"type": "text", "text": ""})
        for piece in pieces:
            self.delta(index, {"type": "text_delta", "text": piece})
        if stop:
            self.block_stop(index)
        return self

    def thinking(self, *pieces: str, signature: str | None = "sig-abc") -> AnthropicStream:
        index = self.block_start({"type": "thinking", "thinking": "", "signature": ""})
        for piece in pieces:
            self.delta(index, {"type": "thinking_delta", "thinking": piece})
        if signature is not None:
            self.delta(index, {"type": "signature_delta", "signature": signature})
        return self.block_stop(index)

    def redacted_thinking(self, data: str) -> AnthropicStream:
        index = self.block_start({"type": "redacted_thinking", "data": data})
        return self.block_stop(index)

    def tool_use(
        self, call_id: str, name: str, json_pieces: Sequence[str] = (), *, stop: bool = True
    ) -> AnthropicStream:
        index = self.block_start({"type": "tool_use", "id": call_id, "name": name, "input": {}})
        for piece in json_pieces:
            self.delta(index, {"type": "input_json_delta", "partial_json": piece})
        if stop:
            self.block_stop(index)
        return self

    # --- endings ---------------------------------------------------------------------

    def message_delta(
        self,
        stop_reason: str | None,
        output_tokens: int,
        *,
        stop_details: dict[str, Any] | None = None,
        usage: dict[str, Any] | None = None,
    ) -> AnthropicStream:
        delta: dict[str, Any] = {"stop_reason": stop_reason, "stop_sequence": None}
        if stop_details is not None:
            delta["stop_details"] = stop_details
        return self.event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": delta,
                "usage": {"output_tokens": output_tokens, **(usage or {})},
            },
        )

    def stop(
        self, stop_reason: str | None = "end_turn", output_tokens: int = 20, **kwargs: Any
    ) -> AnthropicStream:
        self.message_delta(stop_reason, output_tokens, **kwargs)
        return self.event("message_stop", {"type": "message_stop"})

    def error(
        self, error_type: str = "overloaded_error", message: str = "Overloaded"
    ) -> AnthropicStream:
        return self.event(
            "error", {"type": "error", "error": {"type": error_type, "message": message}}
        )

    # --- output ----------------------------------------------------------------------

    def body(self) -> list[Chunk]:
        return list(self.chunks)

    def response(self, headers: dict[str, str] | None = None) -> WireResponse:
        return WireResponse(body=self.body(), headers={"request-id": "req_test", **(headers or {})})

    def bytes_split(self, size: int) -> WireResponse:
        """The whole body re-cut into ``size``-byte chunks (splitting UTF-8 sequences)."""
        joined = "".join(c for c in self.chunks if isinstance(c, str)).encode("utf-8")
        pieces: list[Chunk] = [joined[i : i + size] for i in range(0, len(joined), size)]
        return WireResponse(body=pieces)


def anthropic_error(
    status: int, error_type: str, message: str, headers: dict[str, str] | None = None
) -> WireResponse:
    """A non-2xx reply with Anthropic's error body."""
    payload = {"type": "error", "error": {"type": error_type, "message": message}}
    return json_response(status, payload, {"request-id": "req_err", **(headers or {})})


def decode_sse(body: bytes) -> list[tuple[str | None, Any]]:
    """Parse an SSE body back into (event, data) pairs; for checking the helpers themselves."""
    events: list[tuple[str | None, Any]] = []
    for block in body.decode("utf-8").split("\n\n"):
        if not block.strip():
            continue
        name = None
        data = ""
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                data += line[len("data: ") :]
        events.append((name, data if data == "[DONE]" else json.loads(data)))
    return events
