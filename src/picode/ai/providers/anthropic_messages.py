"""The ``anthropic-messages`` provider: Anthropic's Messages API through the official SDK.

The request goes through the SDK's client (its auth headers, retries and status-error
mapping), but the reply's server-sent events are read off the HTTP response by picode
(``_sse``) and each event's JSON is mapped as the ``dict`` ``json.loads`` gives: the SDK's
stream would build an event object and a typed model per delta only for a few fields to be
read. Nor is the SDK's accumulating helper stream used, it would rebuild a snapshot on
every delta. Events are dispatched on their ``type`` string; event types, blocks and deltas
picode does not know are ignored.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from anthropic import APIStatusError, AsyncAnthropic, AsyncStream, Timeout

from picode.ai.builder import MessageBuilder
from picode.ai.models import Model, builtin_provider_spec
from picode.ai.options import StreamOptions
from picode.ai.providers._asyncio_net import use_asyncio_streams
from picode.ai.providers._client import client_settings
from picode.ai.providers._client_cache import cached_client_async
from picode.ai.providers._convert import (
    object_schema,
    prepare_history,
    same_model,
    sanitize_tool_call_id,
    thinking_as_text,
    user_blocks,
    without_images,
)
from picode.ai.providers._json_body import encode_body
from picode.ai.providers._sse import read_events
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

API = "anthropic-messages"

CONTEXT_OVERFLOW_MESSAGE = (
    "model_context_window_exceeded: the conversation no longer fits in the model's context window"
)


async def produce(
    model: Model, context: Context, options: StreamOptions, out: MessageBuilder
) -> None:
    client = await _client(model, options)
    params = build_params(model, context, options)
    state = _StreamState(out)
    platform = bool(builtin_provider_spec(model.provider).get("client"))
    stream = await _post(client, params, platform=platform)
    # Leaving the block closes the connection at once, however it is left (Esc cancels).
    async with stream:
        if platform:
            # Bedrock's events are not SSE: its SDK stream decodes them, as plain JSON.
            async for event in stream:
                state.handle(event)
        else:
            await _read_events(client, stream, state)


async def _post(client: Any, params: dict[str, Any], *, platform: bool) -> AsyncStream[Any]:
    """``messages.create`` as a streamed POST whose events are plain JSON (``cast_to=object``).

    The body is encoded by picode (``_json_body``: the params are wire-format already, and
    the SDK's copy of the whole history is skipped), except for Bedrock and Vertex
    (``platform``), whose clients rewrite the body on its way (the model goes into the URL).
    Off those, the stream returned only holds the open response: it is never iterated."""
    body = {**params, "stream": True}
    body.update(body.pop("extra_body", None) or {})
    payload = {"body": body} if platform else {"content": encode_body(body)}
    stream: AsyncStream[Any] = await client.post(
        "/v1/messages", cast_to=object, stream=True, stream_cls=AsyncStream[object], **payload
    )
    return stream


async def _read_events(
    client: AsyncAnthropic, stream: AsyncStream[Any], state: _StreamState
) -> None:
    """The events of the open response, decoded and handed to ``state`` as they arrive.

    What the SDK's stream does with them, picode does: ``ping`` and events without a name
    are skipped, an ``error`` event is raised as the SDK's status error (the error mapping
    reads its body). A failed read is left as the HTTP client raised it: picode's error
    mapping classifies transport failures by the exception types in the chain."""
    handle = state.handle
    loads = json.loads

    def dispatch(name: bytes | None, data: bytes) -> None:
        if name is None or name == b"ping":
            return
        if name == b"error":
            raise _stream_error(client, stream, data)
        if data:
            handle(loads(data))

    await read_events(stream.response.aiter_bytes(), dispatch)


def _stream_error(client: AsyncAnthropic, stream: AsyncStream[Any], data: bytes) -> Exception:
    """An ``error`` event as the SDK's stream would raise it."""
    response = stream.response
    body: Any
    try:
        body = json.loads(data)
        text = f"{body}"
    except ValueError:
        body = data.decode("utf-8", "replace")
        text = body or f"Error code: {response.status_code}"
    make = getattr(client, "_make_status_error", None)
    if make is not None:  # the SDK's own choice of error class for the body
        return make(text, body=body, response=response)  # type: ignore[no-any-return]
    return APIStatusError(text, response=response, body=body)


async def prepare(model: Model, options: StreamOptions) -> None:
    """Build the client ahead of the first request (see ``picode.ai.stream.prepare_provider``)."""
    await _client(model, options)


async def _client(model: Model, options: StreamOptions) -> AsyncAnthropic:
    variant = builtin_provider_spec(model.provider).get("client")
    if variant:
        platform: AsyncAnthropic = await _platform_client(str(variant), model, options)
        return platform
    settings = client_settings(model, options)

    def make() -> AsyncAnthropic:
        client = AsyncAnthropic(
            api_key=settings.api_key,
            base_url=settings.base_url,
            max_retries=0,
            timeout=Timeout(settings.idle_timeout_s, connect=settings.connect_timeout_s),
            default_headers=settings.headers,
        )
        use_asyncio_streams(client)
        return client

    return await cached_client_async(settings.cache_key(API), make, AsyncAnthropic.close)


async def _platform_client(variant: str, model: Model, options: StreamOptions) -> Any:
    """Bedrock or Vertex (``_anthropic_clients``); their keys are optional (other logins)."""
    from picode.ai.providers._anthropic_clients import make_client

    settings = client_settings(model, options, key_required=False)
    return await cached_client_async(
        (variant, settings.cache_key(API)),
        lambda: make_client(variant, settings),
        _close,
    )


async def _close(client: Any) -> None:
    await client.close()


# --- request ---------------------------------------------------------------------------


def build_params(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """Keyword arguments for ``messages.create`` (without ``stream``)."""
    max_tokens = options.resolved_max_tokens(model)
    params: dict[str, Any] = {
        "model": model.id,
        "max_tokens": max_tokens,
        "messages": convert_messages(context, model),
    }
    if context.system_prompt:
        params["system"] = [
            {"type": "text", "text": context.system_prompt, "cache_control": {"type": "ephemeral"}}
        ]
    if context.tools:
        params["tools"] = [
            {
                "name": tool.name,
                "description": tool.description,
                "input_schema": object_schema(tool.parameters),
            }
            for tool in context.tools
        ]
    request = thinking_request(model, options.thinking, max_tokens)
    if request.disabled:
        params["thinking"] = {"type": "disabled"}
    elif request.budget is not None:
        params["thinking"] = {"type": "enabled", "budget_tokens": request.budget}
        if request.budget >= max_tokens:
            params["max_tokens"] = request.budget + 1024
    elif request.value is not None:
        adaptive: dict[str, Any] = {"type": "adaptive"}
        if request.display:
            adaptive["display"] = request.display
        params["thinking"] = adaptive
        params["output_config"] = {"effort": request.value}
    if not request.thinks and options.temperature is not None:
        # Refused alongside thinking. This SDK version has no temperature argument; the API
        # still takes it.
        params["extra_body"] = {"temperature": options.temperature}
    return params


def convert_messages(context: Context, model: Model) -> list[dict[str, Any]]:
    """picode history as Anthropic ``messages`` (consecutive same-role turns merged)."""
    history = prepare_history(context.messages, normalize_id=sanitize_tool_call_id)
    out: list[dict[str, Any]] = []
    for message in history:
        if isinstance(message, AssistantMessage):
            role = "assistant"
            blocks = _assistant_blocks(message, model)
        elif isinstance(message, ToolResultMessage):
            role = "user"
            blocks = [_tool_result_block(message, model)]
        else:
            role = "user"
            blocks = _user_content(user_blocks(message.content), model)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    _mark_cache_breakpoint(out)
    return out


def _mark_cache_breakpoint(messages: list[dict[str, Any]]) -> None:
    """Cache everything up to the newest user turn, so the next request reads it back."""
    for message in reversed(messages):
        if message["role"] == "user" and message["content"]:
            message["content"][-1]["cache_control"] = {"type": "ephemeral"}
            return


def _user_content(blocks: list[UserContent], model: Model) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in without_images(blocks, model):
        if isinstance(block, TextContent):
            if block.text.strip():
                out.append({"type": "text", "text": block.text})
        else:
            out.append(_image_block(block))
    return out


def _image_block(image: ImageContent) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": image.mime_type, "data": image.data_base64},
    }


def _tool_result_block(message: ToolResultMessage, model: Model) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": message.tool_call_id,
        "is_error": message.is_error,
    }
    content = _user_content(message.content, model)
    if content:
        block["content"] = content
    return block


def _assistant_blocks(message: AssistantMessage, model: Model) -> list[dict[str, Any]]:
    replay_signed = same_model(message, model)
    out: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                out.append({"type": "text", "text": block.text})
        elif isinstance(block, ThinkingContent):
            if replay_signed and block.thinking_signature:
                if block.redacted:
                    out.append({"type": "redacted_thinking", "data": block.thinking_signature})
                else:
                    out.append(
                        {
                            "type": "thinking",
                            "thinking": block.thinking,
                            "signature": block.thinking_signature,
                        }
                    )
                continue
            text = thinking_as_text(block)
            if text is not None:
                out.append({"type": "text", "text": text.text})
        elif isinstance(block, ToolCall):
            out.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": block.arguments}
            )
    return out


# --- response --------------------------------------------------------------------------

FinishReason = Literal["stop", "length", "toolUse", "error"]

_STOP_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "tool_use": "toolUse",
    "refusal": "error",
    "model_context_window_exceeded": "error",
}


class _StreamState:
    """Maps one response's events (decoded JSON objects) onto the builder."""

    __slots__ = ("blocks", "initial_inputs", "out", "stop_details", "stop_reason")

    def __init__(self, out: MessageBuilder) -> None:
        self.out = out
        #: Anthropic block index -> (kind, picode content index); unknown kinds are absent.
        self.blocks: dict[int, tuple[str, int]] = {}
        #: Whole tool inputs sent in content_block_start by servers that stream no deltas.
        self.initial_inputs: dict[int, dict[str, Any]] = {}
        self.stop_reason: str | None = None
        self.stop_details: Any = None

    def handle(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "content_block_delta":
            self._delta(event)
        elif kind == "content_block_start":
            self._block_start(event)
        elif kind == "content_block_stop":
            self._block_stop(event["index"])
        elif kind == "message_start":
            self._message_start(event)
        elif kind == "message_delta":
            self._message_delta(event)
        elif kind == "message_stop":
            self._finish()
        # Anything else (new event types) carries nothing we map.

    def _delta(self, event: dict[str, Any]) -> None:
        entry = self.blocks.get(event["index"])
        if entry is None:
            return
        block_kind, index = entry
        delta = event["delta"]
        delta_type = delta["type"]
        out = self.out
        if delta_type == "text_delta" and block_kind == "text":
            out.text_delta(index, delta["text"])
        elif delta_type == "thinking_delta" and block_kind == "thinking":
            out.thinking_delta(index, delta["thinking"])
        elif delta_type == "input_json_delta" and block_kind == "toolCall":
            out.toolcall_delta(index, delta["partial_json"])
        elif delta_type == "signature_delta" and block_kind == "thinking":
            out.thinking_signature(index, delta["signature"])

    def _block_start(self, event: dict[str, Any]) -> None:
        block = event["content_block"]
        block_type = block["type"]
        out = self.out
        if block_type == "text":
            index = out.text_start()
            self.blocks[event["index"]] = ("text", index)
            if block.get("text"):
                out.text_delta(index, block["text"])
        elif block_type == "thinking":
            index = out.thinking_start(block.get("signature") or None)
            self.blocks[event["index"]] = ("thinking", index)
            if block.get("thinking"):
                out.thinking_delta(index, block["thinking"])
        elif block_type == "redacted_thinking":
            # The encrypted reasoning goes back verbatim on the next turn.
            index = out.thinking_start(block["data"], redacted=True)
            self.blocks[event["index"]] = ("redacted", index)
        elif block_type == "tool_use":
            index = out.toolcall_start(block["id"], block["name"])
            self.blocks[event["index"]] = ("toolCall", index)
            tool_input = block.get("input")
            if isinstance(tool_input, dict) and tool_input:
                self.initial_inputs[index] = tool_input

    def _block_stop(self, native_index: int) -> None:
        entry = self.blocks.pop(native_index, None)
        if entry is None:
            return
        block_kind, index = entry
        if block_kind == "text":
            self.out.text_end(index)
        elif block_kind in ("thinking", "redacted"):
            self.out.thinking_end(index)
        else:
            initial = self.initial_inputs.pop(index, None)
            if initial is not None and not self.out.toolcall_arguments_text(index):
                self.out.toolcall_end(index, initial)
            else:
                self.out.toolcall_end(index)

    def _message_start(self, event: dict[str, Any]) -> None:
        message = event.get("message") or {}
        self.out.message.response_id = message.get("id")
        self._usage(message.get("usage"))

    def _message_delta(self, event: dict[str, Any]) -> None:
        delta = event.get("delta") or {}
        if delta.get("stop_reason") is not None:
            self.stop_reason = delta["stop_reason"]
            self.stop_details = delta.get("stop_details")
        self._usage(event.get("usage"))

    def _usage(self, usage: dict[str, Any] | None) -> None:
        if usage is not None:
            # Anthropic's input_tokens already excludes cache reads and writes.
            self.out.set_usage(
                input=usage.get("input_tokens"),
                output=usage.get("output_tokens"),
                cache_read=usage.get("cache_read_input_tokens"),
                cache_write=usage.get("cache_creation_input_tokens"),
            )

    def _finish(self) -> None:
        native = self.stop_reason or "end_turn"
        reason = _STOP_REASONS.get(native, "stop")
        if reason == "error":
            self.out.message.error_message = _stop_error_message(native, self.stop_details)
        self.out.finish(reason)


def _stop_error_message(native: str, details: Any) -> str:
    if native == "model_context_window_exceeded":
        return CONTEXT_OVERFLOW_MESSAGE
    text = "The model refused to respond (stop reason: refusal)"
    if isinstance(details, dict):
        category = details.get("category")
        explanation = details.get("explanation")
        if category:
            text += f"; category: {category}"
        if explanation:
            text += f": {explanation}"
    return text
