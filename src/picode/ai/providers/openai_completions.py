"""The ``openai-completions`` provider: Chat Completions through the official OpenAI SDK.

Meant for OpenAI-compatible servers (Ollama, vLLM, llama.cpp, OpenRouter, ...), so it reads
what those servers actually send: reasoning under ``reasoning_content`` or ``reasoning``,
tool calls keyed by index with the id and name on the first fragment only, usage on a
chunk with no choices, and an ``{"error": ...}`` chunk for failures mid-stream.

``[DONE]`` only ends the reading, so the finish reason is this API's end marker: a stream
that stops before any choice carried one ends as an error.

The request goes out through the SDK's client (auth, headers, retries off, timeouts and
HTTP errors are the SDK's), but its chunks are read off the response by picode as the JSON
the server sent, an ``{"error": ...}`` chunk raised as the SDK's ``APIError``
(``_openai_post``), as the Responses provider does:
``chat.completions.create`` would import the SDK's chat resources and types, walk the
request's typed-dict annotations and build a pydantic object per chunk, ~80 ms of CPU on
the way to the first answer that the request does not need.
"""

from __future__ import annotations

import ipaddress
import json
import secrets
from typing import Any, Literal
from urllib.parse import urlsplit

from openai import AsyncOpenAI, Timeout

from picode.ai.builder import MessageBuilder
from picode.ai.models import Model, builtin_provider_spec
from picode.ai.options import StreamOptions
from picode.ai.providers._asyncio_net import use_asyncio_streams
from picode.ai.providers._client import PLACEHOLDER_API_KEY, base_url_for, client_settings
from picode.ai.providers._client_cache import cached_client_async
from picode.ai.providers._convert import (
    prepare_history,
    same_model,
    sanitize_tool_call_id,
    thinking_as_text,
    user_blocks,
    without_images,
)
from picode.ai.providers._openai_post import post_stream, read_events
from picode.ai.thinking import thinking_request
from picode.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserContent,
)

API = "openai-completions"
Json = dict[str, Any]

#: Fields compatible servers use for streamed reasoning, in order of preference. The field
#: a thinking block came from is kept as its signature, to send it back the same way.
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")

#: OpenAI rejects longer tool call ids in Chat Completions history.
MAX_TOOL_CALL_ID = 40

FinishReason = Literal["stop", "length", "toolUse", "error"]

_FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
    "content_filter": "error",
    "error": "error",
}


async def produce(
    model: Model, context: Context, options: StreamOptions, out: MessageBuilder
) -> None:
    client = await _client(model, options)
    stream = await post_stream(client, "/chat/completions", build_params(model, context, options))
    state = _ChunkState(out)
    async with stream:
        await read_events(stream, state.handle)
    state.finish()


async def prepare(model: Model, options: StreamOptions) -> None:
    """Build the client ahead of the first request (see ``picode.ai.stream.prepare_provider``)."""
    await _client(model, options)


async def _client(model: Model, options: StreamOptions) -> AsyncOpenAI:
    # A packaged local server (Ollama, ...) needs no key wherever OLLAMA_HOST points.
    local = is_local_url(base_url_for(model, options)) or bool(
        builtin_provider_spec(model.provider).get("local")
    )
    settings = client_settings(model, options, key_required=not local)

    def make() -> AsyncOpenAI:
        kwargs: dict[str, Any] = {}
        if settings.base_url:
            kwargs["base_url"] = settings.base_url
        client = AsyncOpenAI(
            api_key=settings.api_key or PLACEHOLDER_API_KEY,
            max_retries=0,
            timeout=Timeout(settings.idle_timeout_s, connect=settings.connect_timeout_s),
            default_headers=settings.headers,
            **kwargs,
        )
        use_asyncio_streams(client)
        return client

    return await cached_client_async(settings.cache_key(API), make, AsyncOpenAI.close)


def is_local_url(url: str | None) -> bool:
    """A server on this machine or the local network, which usually wants no key."""
    if not url:
        return False
    host = (urlsplit(url).hostname or "").lower()
    if host in ("localhost", "host.docker.internal") or host.endswith((".local", ".localhost")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_unspecified


def _is_openai(url: str | None) -> bool:
    return url is None or (urlsplit(url).hostname or "") == "api.openai.com"


# --- request ---------------------------------------------------------------------------


def build_params(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """The request body for ``/chat/completions`` (without ``stream``): what
    ``chat.completions.create`` takes as keyword arguments."""
    base_url = base_url_for(model, options)
    params: dict[str, Any] = {
        "model": model.id,
        "messages": convert_messages(context, model),
        "stream_options": {"include_usage": True},
    }
    if options.max_tokens:
        # Only when asked: local servers reject a limit beyond what their context leaves.
        key = "max_completion_tokens" if _is_openai(base_url) else "max_tokens"
        params[key] = options.max_tokens
    if context.tools:
        params["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                },
            }
            for tool in context.tools
        ]
    effort = thinking_request(model, options.thinking).value
    if effort is not None:
        params["reasoning_effort"] = effort
    if options.temperature is not None:
        params["temperature"] = options.temperature
    if options.session_id and _is_openai(base_url):
        params["prompt_cache_key"] = options.session_id
    return params


def convert_messages(context: Context, model: Model) -> list[dict[str, Any]]:
    """picode history as Chat Completions ``messages``.

    Tool messages carry text only, so images from tool results follow the run of tool
    messages as one user message.
    """
    history = prepare_history(
        context.messages,
        normalize_id=lambda call_id: sanitize_tool_call_id(call_id, max_length=MAX_TOOL_CALL_ID),
    )
    out: list[dict[str, Any]] = []
    if context.system_prompt:
        out.append({"role": "system", "content": context.system_prompt})
    tool_images: list[UserContent] = []
    for message in history:
        if tool_images and not isinstance(message, ToolResultMessage):
            out.append(_tool_images_message(tool_images))
            tool_images = []
        if isinstance(message, AssistantMessage):
            converted = _assistant_message(message, model)
            if converted is not None:
                out.append(converted)
        elif isinstance(message, ToolResultMessage):
            blocks = without_images(message.content, model)
            text = "\n".join(b.text for b in blocks if isinstance(b, TextContent))
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": message.tool_call_id,
                    "content": text or "(no output)",
                }
            )
            tool_images.extend(b for b in blocks if isinstance(b, ImageContent))
        else:
            content = _user_content(without_images(user_blocks(message.content), model))
            if content:
                out.append({"role": "user", "content": content})
    if tool_images:
        out.append(_tool_images_message(tool_images))
    return out


def _user_content(blocks: list[UserContent]) -> str | list[dict[str, Any]]:
    if all(isinstance(block, TextContent) for block in blocks):
        # Plain strings work on every server; some reject content arrays.
        return "\n".join(block.text for block in blocks if isinstance(block, TextContent))
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, TextContent):
            if block.text:
                parts.append({"type": "text", "text": block.text})
        else:
            parts.append(_image_part(block))
    return parts


def _image_part(image: ImageContent) -> dict[str, Any]:
    url = f"data:{image.mime_type};base64,{image.data_base64}"
    return {"type": "image_url", "image_url": {"url": url}}


def _tool_images_message(images: list[UserContent]) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"type": "text", "text": "Images returned by the tool:"}]
    parts.extend(_image_part(image) for image in images if isinstance(image, ImageContent))
    return {"role": "user", "content": parts}


def _assistant_message(message: AssistantMessage, model: Model) -> dict[str, Any] | None:
    own = same_model(message, model)
    texts: list[str] = []
    reasoning: dict[str, list[str]] = {}
    calls: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                texts.append(block.text)
        elif isinstance(block, ThinkingContent):
            field = block.thinking_signature
            if own and field in REASONING_FIELDS and block.thinking:
                reasoning.setdefault(field, []).append(block.thinking)
            elif (text := thinking_as_text(block)) is not None:
                texts.append(text.text)
        elif isinstance(block, ToolCall):
            calls.append(
                {
                    "id": block.id,
                    "type": "function",
                    "function": {
                        "name": block.name,
                        "arguments": json.dumps(block.arguments, ensure_ascii=False),
                    },
                }
            )
    if not texts and not calls:
        return None
    converted: dict[str, Any] = {
        "role": "assistant",
        "content": "\n\n".join(texts) if texts else None,
    }
    for field, parts in reasoning.items():
        converted[field] = "".join(parts)
    if calls:
        converted["tool_calls"] = calls
    return converted


# --- response --------------------------------------------------------------------------


class _ChunkState:
    """Maps one response's chunks onto the builder."""

    __slots__ = ("current", "finish_reason", "out", "tools")

    def __init__(self, out: MessageBuilder) -> None:
        self.out = out
        #: The open text or thinking block: (kind, content index).
        self.current: tuple[str, int] | None = None
        #: Tool call index on the wire -> (call id, content index).
        self.tools: dict[int, tuple[str, int]] = {}
        self.finish_reason: str | None = None

    def handle(self, chunk: Json) -> None:
        """One chunk as the server sent it (decoded JSON)."""
        out = self.out
        if out.message.response_id is None:
            response_id = chunk.get("id")
            if response_id:
                out.message.response_id = response_id
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self._usage(usage)
        choices = chunk.get("choices")
        if not choices or not isinstance(choices, list):
            return
        choice = choices[0]
        if not isinstance(choice, dict):
            return
        delta = choice.get("delta")
        if isinstance(delta, dict):
            self._reasoning(delta)
            content = delta.get("content")
            if content:
                self._text(content)
            refusal = delta.get("refusal")
            if refusal:
                self._text(refusal)
            tool_calls = delta.get("tool_calls")
            if tool_calls:
                for fragment in tool_calls:
                    if isinstance(fragment, dict):
                        self._tool_fragment(fragment)
        finish_reason = choice.get("finish_reason")
        if finish_reason:
            self.finish_reason = finish_reason

    def finish(self) -> None:
        native = self.finish_reason
        if native is None:
            return  # the builder reports the stream as unterminated
        reason = _FINISH_REASONS.get(native, "stop")
        out = self.out
        if reason == "toolUse" and not out.message.tool_calls:
            reason = "stop"
        if reason == "error":
            out.message.error_message = (
                "The provider's content filter stopped the response (finish_reason: content_filter)"
                if native == "content_filter"
                else f"The provider ended the response with an error (finish_reason: {native})"
            )
        out.finish(reason)

    def _reasoning(self, delta: Json) -> None:
        for field in REASONING_FIELDS:
            text = delta.get(field)
            if isinstance(text, str) and text:
                index = self._open("thinking", field)
                self.out.thinking_delta(index, text)
                return

    def _text(self, text: str) -> None:
        index = self._open("text")
        self.out.text_delta(index, text)

    def _open(self, kind: str, signature: str | None = None) -> int:
        current = self.current
        if current is not None and current[0] == kind:
            return current[1]
        self._close_current()
        out = self.out
        index = out.thinking_start(signature) if kind == "thinking" else out.text_start()
        self.current = (kind, index)
        return index

    def _close_current(self) -> None:
        current = self.current
        if current is None:
            return
        self.current = None
        if current[0] == "text":
            self.out.text_end(current[1])
        else:
            self.out.thinking_end(current[1])

    def _tool_fragment(self, fragment: Json) -> None:
        index = fragment.get("index")
        wire_index = index if index is not None else len(self.tools)
        function = fragment.get("function")
        if not isinstance(function, dict):
            function = {}
        name = function.get("name")
        call_id = fragment.get("id")
        entry = self.tools.get(wire_index)
        if entry is None or (call_id and call_id != entry[0]):
            # A new call; servers that number every call 0 are told apart by their ids.
            self._close_current()
            call_id = call_id or f"call_{secrets.token_hex(8)}"
            entry = (call_id, self.out.toolcall_start(call_id, name or ""))
            self.tools[wire_index] = entry
        elif name:
            block = self.out.message.content[entry[1]]
            if isinstance(block, ToolCall) and not block.name:
                block.name = name
        arguments = function.get("arguments")
        if arguments:
            self.out.toolcall_delta(entry[1], arguments)

    def _usage(self, usage: Json) -> None:
        details = usage.get("prompt_tokens_details")
        if not isinstance(details, dict):
            details = {}
        cached = details.get("cached_tokens") or 0
        written = details.get("cache_write_tokens") or 0
        prompt = usage.get("prompt_tokens") or 0
        self.out.set_usage(
            input=prompt - cached - written,
            output=usage.get("completion_tokens") or 0,
            cache_read=cached,
            cache_write=written,
        )
