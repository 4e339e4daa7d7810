"""The ``google-generative-ai`` provider: the Gemini API through the ``google-genai`` SDK.

Gemini streams whole ``GenerateContentResponse`` chunks rather than block events, so blocks
are derived here: consecutive text parts of one kind (thought or not) form one block, a
change of kind closes the open block, and a function call arrives complete and becomes a
tool call at once. Thought signatures stay on the block whose part carried them and go back
to the same model on the next turn.

The request goes out through the SDK's client (its URL, auth headers, HTTP client, errors
and SSE framing) with a body picode builds (``_google_body``), and each chunk is read as
the JSON the server sent (``_google_post``): the SDK's typed models cost ~150 ms of CPU on
the way to the first answer. What the SDK would do on its own is off: retries (the session
retries); automatic function calling and continuation are features of its typed method.
"""

from __future__ import annotations

import dataclasses
import json
import re
import secrets
from typing import Any, Literal

from google.genai import types
from google.genai._api_client import BaseApiClient

from picode.ai.builder import MessageBuilder
from picode.ai.models import Model
from picode.ai.options import StreamOptions
from picode.ai.providers._client import client_settings
from picode.ai.providers._client_cache import cached_client_async
from picode.ai.providers._google_body import (
    SYNTHETIC_ID_PREFIX,
    model_path,
    request_body,
    stored_signature,
)
from picode.ai.providers._google_post import api_client, post_stream
from picode.ai.providers._google_ssl import one_ssl_context
from picode.ai.types import Context, TextContent

API = "google-generative-ai"

#: The SDK derives a server-side deadline from the client timeout; that timeout is our
#: idle timeout, far shorter than a long answer may take, so the deadline is set apart.
SERVER_DEADLINE_S = 3600

_VERSION_SUFFIX = re.compile(r"^(?P<root>.*?)/(?P<version>v\d+(?:alpha|beta)?\d*)/?$")


async def produce(
    model: Model, context: Context, options: StreamOptions, out: MessageBuilder
) -> None:
    client = await _client(model, options)
    path = f"{model_path(model.id)}:streamGenerateContent?alt=sse"
    stream = await post_stream(client, path, request_body(model, context, options))
    state = _StreamState(out)
    try:
        async for chunk in stream:
            state.on_chunk(chunk)
    finally:
        await stream.aclose()  # type: ignore[attr-defined]
    state.finish()


async def prepare(model: Model, options: StreamOptions) -> None:
    """Build the client ahead of the first request (see ``picode.ai.stream.prepare_provider``)."""
    await _client(model, options)


async def _client(model: Model, options: StreamOptions) -> BaseApiClient:
    settings = client_settings(model, options)
    headers = dict(settings.headers)
    # The SDK adds its own deadline unless this exact spelling is present.
    deadline = str(SERVER_DEADLINE_S)
    for name in [n for n in headers if n.lower() == "x-server-timeout"]:
        deadline = headers.pop(name)
    headers["X-Server-Timeout"] = deadline
    settings = dataclasses.replace(settings, headers=headers)

    def make() -> BaseApiClient:
        root, version = split_api_version(settings.base_url)
        http_options = types.HttpOptions(
            base_url=root,
            api_version=version,
            headers=headers,
            # Milliseconds; httpx applies it to every read, which makes it an idle timeout.
            timeout=max(1, int(settings.idle_timeout_s * 1000)),
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        http_options = one_ssl_context(http_options)
        return api_client(settings.api_key, http_options)

    return await cached_client_async(settings.cache_key(API), make, _close_client)


async def _close_client(client: BaseApiClient) -> None:
    await client.aclose()


def split_api_version(base_url: str | None) -> tuple[str | None, str | None]:
    """``https://host/v1beta`` -> (``https://host``, ``v1beta``): the SDK adds the version."""
    if not base_url:
        return None, None
    match = _VERSION_SUFFIX.match(base_url)
    if match is None:
        return base_url, None
    return match["root"], match["version"]


# --- response --------------------------------------------------------------------------

FinishReason = Literal["stop", "length", "error"]

_FINISH_REASONS: dict[str, FinishReason] = {
    "STOP": "stop",
    "FINISH_REASON_UNSPECIFIED": "stop",
    "MAX_TOKENS": "length",
    # Only sent when the request allowed continuation, which picode does not; the answer
    # was cut at a limit all the same.
    "CONTINUATION": "length",
}

_FINISH_ERRORS = {
    "SAFETY": "The response was blocked by Gemini's safety filters",
    "RECITATION": "The response was stopped because it recited source material",
    "LANGUAGE": "The response was stopped: unsupported language",
    "BLOCKLIST": "The response was stopped because it contained a blocklisted term",
    "PROHIBITED_CONTENT": "The response was blocked for prohibited content",
    "SPII": "The response was blocked for sensitive personal information",
    "MALFORMED_FUNCTION_CALL": "The model produced a malformed function call",
    "UNEXPECTED_TOOL_CALL": "The model called a tool that was not offered",
    "TOO_MANY_TOOL_CALLS": "The model made too many tool calls",
    "MISSING_THOUGHT_SIGNATURE": "The request lacked a thought signature the model requires",
    "MALFORMED_RESPONSE": "The model produced a malformed response",
    "OTHER": "The model stopped for an unspecified reason",
    "IMAGE_SAFETY": "The image was blocked by Gemini's safety filters",
    "IMAGE_PROHIBITED_CONTENT": "The image was blocked for prohibited content",
    "IMAGE_RECITATION": "The image was stopped because it recited source material",
    "IMAGE_OTHER": "Image generation stopped for an unspecified reason",
    "NO_IMAGE": "The model was expected to produce an image and did not",
    "ESCALATION": "The request was filtered by an escalation rule",
    "PUP_LIMITED_DISABLED": "The account is limited under the prohibited use policy",
    "MODEL_ARMOR": "The response was blocked by Model Armor",
}


class _StreamState:
    """Turns response chunks into blocks on the builder."""

    __slots__ = (
        "block_reason",
        "call_ids",
        "finish_message",
        "finish_reason",
        "open_index",
        "open_kind",
        "out",
    )

    def __init__(self, out: MessageBuilder) -> None:
        self.out = out
        self.open_kind: str | None = None  # "text" | "thinking"
        self.open_index = -1
        self.finish_reason: str | None = None
        self.finish_message: str | None = None
        self.block_reason: str | None = None
        self.call_ids: set[str] = set()

    def on_chunk(self, chunk: dict[str, Any]) -> None:
        """One chunk as the server sent it (camelCase ``GenerateContentResponse`` JSON)."""
        out = self.out
        out.start()
        response_id = chunk.get("responseId")
        if response_id and not out.message.response_id:
            out.message.response_id = response_id
        usage = chunk.get("usageMetadata")
        if isinstance(usage, dict):
            self._usage(usage)
        feedback = chunk.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason"):
            self.block_reason = _blocked_text(feedback)
        candidates = chunk.get("candidates")
        if not candidates or not isinstance(candidates, list):
            return
        candidate = candidates[0]
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        for part in parts or ():
            if isinstance(part, dict):
                self._part(part)
        finish_reason = candidate.get("finishReason")
        if finish_reason:
            self.finish_reason = str(finish_reason)
            self.finish_message = candidate.get("finishMessage")

    def finish(self) -> None:
        out = self.out
        if self.block_reason is not None:
            out.message.error_message = self.block_reason
            out.finish("error")
            return
        if self.finish_reason is None:
            # No finish reason: the stream was cut short. run_provider reports it.
            return
        reason = _FINISH_REASONS.get(self.finish_reason)
        if reason is None and self.finish_reason in _FINISH_ERRORS:
            text = f"{_FINISH_ERRORS[self.finish_reason]} (finish reason {self.finish_reason})"
            if self.finish_message:
                text += f": {self.finish_message}"
            out.message.error_message = text
            reason = "error"
        out.finish(reason or "stop")  # an unknown reason ended the turn normally

    # --- parts ---

    def _part(self, part: dict[str, Any]) -> None:
        signature = stored_signature(part.get("thoughtSignature"))
        call = part.get("functionCall")
        if isinstance(call, dict):
            self._close_open()
            self._function_call(call, signature)
            return
        text = part.get("text")
        if text is None and signature is None:
            return  # inline data, code execution and other parts picode does not show
        kind = "thinking" if part.get("thought") else "text"
        out = self.out
        if self.open_kind != kind:
            self._close_open()
            self.open_kind = kind
            self.open_index = out.thinking_start() if kind == "thinking" else out.text_start()
        index = self.open_index
        if kind == "thinking":
            out.thinking_delta(index, text or "")
            if signature is not None:
                out.thinking_signature(index, signature, append=False)
        else:
            out.text_delta(index, text or "")
            if signature is not None:
                block = out.message.content[index]
                if isinstance(block, TextContent):
                    block.text_signature = signature

    def _function_call(self, call: dict[str, Any], signature: str | None) -> None:
        name = call.get("name") or ""
        call_id = call.get("id")
        if not call_id or call_id in self.call_ids:
            # Parallel calls to one tool need distinct ids for their results to pair up.
            call_id = f"{SYNTHETIC_ID_PREFIX}{secrets.token_hex(8)}"
        self.call_ids.add(call_id)
        args = call.get("args")
        arguments: dict[str, Any] = args if isinstance(args, dict) else {}
        out = self.out
        index = out.toolcall_start(call_id, name, thought_signature=signature)
        out.toolcall_delta(index, json.dumps(arguments, ensure_ascii=False))
        out.toolcall_end(index, arguments)

    def _close_open(self) -> None:
        if self.open_kind == "text":
            self.out.text_end(self.open_index)
        elif self.open_kind == "thinking":
            self.out.thinking_end(self.open_index)
        self.open_kind = None

    def _usage(self, usage: dict[str, Any]) -> None:
        cached = usage.get("cachedContentTokenCount") or 0
        self.out.set_usage(
            input=(usage.get("promptTokenCount") or 0) - cached,
            output=(usage.get("candidatesTokenCount") or 0)
            + (usage.get("thoughtsTokenCount") or 0),
            cache_read=cached,
        )


def _blocked_text(feedback: dict[str, Any]) -> str:
    reason = feedback.get("blockReason")
    text = f"The prompt was blocked by Gemini (block reason {reason})"
    message = feedback.get("blockReasonMessage")
    if message:
        text += f": {message}"
    return text
