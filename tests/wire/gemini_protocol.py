"""Gemini ``streamGenerateContent?alt=sse`` streams, written the way the service writes them.

The service sends only ``data: <GenerateContentResponse JSON>`` events (no ``event:`` line,
no end marker), with camelCase fields. Each chunk carries the new parts of the first
candidate; the last one carries ``finishReason`` and the final ``usageMetadata``. A prompt
the service refuses comes back as a chunk with ``promptFeedback.blockReason`` and no
candidates. Errors after the stream has started are a chunk holding only ``{"error": ...}``.
"""

from __future__ import annotations

from typing import Any

from tests.wire.server import Chunk, WireResponse, json_response, sse


def text(value: str, *, thought: bool = False, signature: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"text": value}
    if thought:
        part["thought"] = True
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def function_call(
    name: str,
    args: dict[str, Any] | None = None,
    *,
    call_id: str | None = None,
    signature: str | None = None,
) -> dict[str, Any]:
    call: dict[str, Any] = {"name": name}
    if args is not None:
        call["args"] = args
    if call_id is not None:
        call["id"] = call_id
    part: dict[str, Any] = {"functionCall": call}
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def usage(
    prompt: int = 0, candidates: int = 0, thoughts: int = 0, cached: int = 0
) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": candidates,
        "totalTokenCount": prompt + candidates + thoughts,
    }
    if thoughts:
        metadata["thoughtsTokenCount"] = thoughts
    if cached:
        metadata["cachedContentTokenCount"] = cached
    return metadata


def api_error(
    status: int,
    message: str,
    state: str,
    headers: dict[str, str] | None = None,
    details: list[dict[str, Any]] | None = None,
) -> WireResponse:
    """A non-2xx answer in Google's error shape."""
    error: dict[str, Any] = {"code": status, "message": message, "status": state}
    if details is not None:
        error["details"] = details
    return json_response(status, {"error": error}, headers)


class GeminiStream:
    def __init__(self, model_version: str = "gemini-test", response_id: str = "resp-g1") -> None:
        self.model_version = model_version
        self.response_id = response_id
        self.chunks: list[Chunk] = []

    def chunk(
        self,
        *parts: dict[str, Any],
        finish: str | None = None,
        usage_: dict[str, Any] | None = None,
        finish_message: str | None = None,
    ) -> GeminiStream:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
        if finish is not None:
            candidate["finishReason"] = finish
        if finish_message is not None:
            candidate["finishMessage"] = finish_message
        payload: dict[str, Any] = {
            "candidates": [candidate],
            "modelVersion": self.model_version,
            "responseId": self.response_id,
        }
        if usage_ is not None:
            payload["usageMetadata"] = usage_
        self.chunks.append(sse(None, payload))
        return self

    def blocked(self, reason: str, message: str | None = None) -> GeminiStream:
        feedback: dict[str, Any] = {"blockReason": reason}
        if message is not None:
            feedback["blockReasonMessage"] = message
        payload = {
            "promptFeedback": feedback,
            "usageMetadata": usage(prompt=12),
            "modelVersion": self.model_version,
            "responseId": self.response_id,
        }
        self.chunks.append(sse(None, payload))
        return self

    def error(self, status: int, message: str, state: str) -> GeminiStream:
        self.chunks.append(
            sse(None, {"error": {"code": status, "message": message, "status": state}})
        )
        return self

    def raw(self, *chunks: Chunk) -> GeminiStream:
        self.chunks.extend(chunks)
        return self

    def response(self) -> WireResponse:
        return WireResponse(body=list(self.chunks))
