"""The ``google-generative-ai`` provider: the Gemini API through the ``google-genai`` SDK.

Gemini streams whole ``GenerateContentResponse`` chunks rather than block events, so blocks
are derived here: consecutive text parts of one kind (thought or not) form one block, a
change of kind closes the open block, and a function call arrives complete and becomes a
tool call at once. Thought signatures stay on the block whose part carried them and go back
to the same model on the next turn.

The SDK's own conveniences are switched off: retries (the session retries), automatic
function calling (the agent runs tools) and automatic continuation (one request per turn).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import re
import secrets
import warnings
from typing import Any, Literal

from google import genai
from google.genai import types

from picode.ai.builder import MessageBuilder
from picode.ai.models import Model
from picode.ai.options import StreamOptions
from picode.ai.providers._client import client_settings
from picode.ai.providers._client_cache import cached_client_async
from picode.ai.providers._convert import (
    prepare_history,
    same_model,
    thinking_as_text,
    user_blocks,
    without_images,
)
from picode.ai.providers._google_ssl import one_ssl_context
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

API = "google-generative-ai"

#: Ids picode makes up for calls that arrive without one; never sent back to Gemini.
SYNTHETIC_ID_PREFIX = "local_"

#: The SDK derives a server-side deadline from the client timeout; that timeout is our
#: idle timeout, far shorter than a long answer may take, so the deadline is set apart.
SERVER_DEADLINE_S = 3600

#: Gemini 3 rejects a replayed function call without a thought signature (a call another
#: model made, or one from before a model switch); Google documents this value as the way
#: to replay such calls. It is the wire text: the SDK sends bytes as URL-safe base64.
SKIP_SIGNATURE = base64.urlsafe_b64decode("skip_thought_signature_validator")
_GEMINI_MAJOR = re.compile(r"gemini-(\d+)")

_VERSION_SUFFIX = re.compile(r"^(?P<root>.*?)/(?P<version>v\d+(?:alpha|beta)?\d*)/?$")


async def produce(
    model: Model, context: Context, options: StreamOptions, out: MessageBuilder
) -> None:
    _silence_unknown_enum_warnings()
    client = await _client(model, options)
    stream = await client.aio.models.generate_content_stream(
        model=model.id,
        contents=convert_contents(context, model),
        config=build_config(model, context, options),
    )
    state = _StreamState(out)
    try:
        async for chunk in stream:
            state.on_chunk(chunk)
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
    state.finish()


def _silence_unknown_enum_warnings() -> None:
    """The SDK warns on stderr for enum values it does not know (a new finish reason);
    they are handled here, and stray stderr text would garble a terminal UI."""
    warnings.filterwarnings(
        "ignore", message=r".* is not a valid \w+$", category=UserWarning, module=r"google\.genai"
    )


async def prepare(model: Model, options: StreamOptions) -> None:
    """Build the client ahead of the first request (see ``picode.ai.stream.prepare_provider``)."""
    await _client(model, options)


async def _client(model: Model, options: StreamOptions) -> genai.Client:
    settings = client_settings(model, options)
    headers = dict(settings.headers)
    # The SDK adds its own deadline unless this exact spelling is present.
    deadline = str(SERVER_DEADLINE_S)
    for name in [n for n in headers if n.lower() == "x-server-timeout"]:
        deadline = headers.pop(name)
    headers["X-Server-Timeout"] = deadline
    settings = dataclasses.replace(settings, headers=headers)

    def make() -> genai.Client:
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
        return genai.Client(api_key=settings.api_key, vertexai=False, http_options=http_options)

    return await cached_client_async(settings.cache_key(API), make, _close_client)


async def _close_client(client: genai.Client) -> None:
    await client.aio.aclose()


def split_api_version(base_url: str | None) -> tuple[str | None, str | None]:
    """``https://host/v1beta`` -> (``https://host``, ``v1beta``): the SDK adds the version."""
    if not base_url:
        return None, None
    match = _VERSION_SUFFIX.match(base_url)
    if match is None:
        return base_url, None
    return match["root"], match["version"]


# --- request ---------------------------------------------------------------------------


def build_config(
    model: Model, context: Context, options: StreamOptions
) -> types.GenerateContentConfig:
    max_tokens = options.resolved_max_tokens(model)
    config = types.GenerateContentConfig(
        max_output_tokens=max_tokens,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        automatic_continuation=False,
    )
    if context.system_prompt:
        config.system_instruction = context.system_prompt
    if options.temperature is not None:
        config.temperature = options.temperature
    if context.tools:
        declarations = [
            types.FunctionDeclaration(
                name=tool.name,
                description=tool.description,
                parameters_json_schema=tool.parameters,
            )
            for tool in context.tools
        ]
        config.tools = [types.Tool(function_declarations=declarations)]
    request = thinking_request(model, options.thinking, max_tokens)
    if request.disabled:
        config.thinking_config = types.ThinkingConfig(thinking_budget=0)
    elif request.budget is not None:
        config.thinking_config = types.ThinkingConfig(
            thinking_budget=request.budget, include_thoughts=True
        )
    elif request.value is not None:
        config.thinking_config = types.ThinkingConfig(
            thinking_level=types.ThinkingLevel(request.value.upper()), include_thoughts=True
        )
    return config


def convert_contents(context: Context, model: Model) -> list[types.Content]:
    """picode history as Gemini ``contents`` (consecutive same-role turns merged)."""
    history = prepare_history(context.messages)
    contents: list[types.Content] = []
    #: Calls whose id came from Gemini itself; their results cite it back.
    cited_ids: set[str] = set()
    tool_images: list[types.Part] = []
    for message in history:
        if isinstance(message, ToolResultMessage):
            role = "user"
            parts = [_function_response(message, cited_ids, model, tool_images)]
        else:
            if tool_images:
                _append(contents, "user", [_images_intro(), *tool_images])
                tool_images = []
            if isinstance(message, AssistantMessage):
                role = "model"
                parts = _model_parts(message, model, cited_ids)
            else:
                role = "user"
                parts = _user_parts(user_blocks(message.content), model)
        _append(contents, role, parts)
    if tool_images:
        _append(contents, "user", [_images_intro(), *tool_images])
    return contents


def _append(contents: list[types.Content], role: str, parts: list[types.Part]) -> None:
    if not parts:
        return
    if contents and contents[-1].role == role and contents[-1].parts is not None:
        contents[-1].parts.extend(parts)
    else:
        contents.append(types.Content(role=role, parts=parts))


def _user_parts(blocks: list[UserContent], model: Model) -> list[types.Part]:
    parts: list[types.Part] = []
    for block in without_images(blocks, model):
        if isinstance(block, TextContent):
            if block.text:
                parts.append(types.Part(text=block.text))
        else:
            parts.append(_image_part(block))
    return parts


def _image_part(image: ImageContent) -> types.Part:
    data = base64.b64decode(image.data_base64)
    return types.Part(inline_data=types.Blob(mime_type=image.mime_type, data=data))


def _images_intro() -> types.Part:
    return types.Part(text="Images returned by the tools above:")


def _function_response(
    message: ToolResultMessage, cited_ids: set[str], model: Model, images: list[types.Part]
) -> types.Part:
    texts: list[str] = []
    for block in without_images(message.content, model):
        if isinstance(block, TextContent):
            texts.append(block.text)
        else:
            images.append(_image_part(block))
    text = "\n".join(texts)
    response = {"error": text} if message.is_error else {"output": text}
    call_id = message.tool_call_id if message.tool_call_id in cited_ids else None
    return types.Part(
        function_response=types.FunctionResponse(
            name=message.tool_name, id=call_id, response=response
        )
    )


def _model_parts(message: AssistantMessage, model: Model, cited_ids: set[str]) -> list[types.Part]:
    native = same_model(message, model)
    unsigned_calls = SKIP_SIGNATURE if _requires_call_signatures(model) else None
    parts: list[types.Part] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            signature = _decode_signature(block.thinking_signature) if native else None
            if signature is not None and not block.redacted:
                parts.append(
                    types.Part(text=block.thinking, thought=True, thought_signature=signature)
                )
                continue
            text = thinking_as_text(block)
            if text is not None:
                parts.append(types.Part(text=text.text))
        elif isinstance(block, TextContent):
            signature = _decode_signature(block.text_signature) if native else None
            if block.text or signature is not None:
                parts.append(types.Part(text=block.text, thought_signature=signature))
        elif isinstance(block, ToolCall):
            call_id: str | None = None
            if native and not block.id.startswith(SYNTHETIC_ID_PREFIX):
                call_id = block.id
                cited_ids.add(block.id)
            signature = _decode_signature(block.thought_signature) if native else None
            call = types.FunctionCall(name=block.name, args=block.arguments, id=call_id)
            parts.append(
                types.Part(function_call=call, thought_signature=signature or unsigned_calls)
            )
    return parts


def _requires_call_signatures(model: Model) -> bool:
    found = _GEMINI_MAJOR.search(model.id)
    return found is not None and int(found.group(1)) >= 3


def _decode_signature(signature: str | None) -> bytes | None:
    if not signature:
        return None
    try:
        return base64.b64decode(signature, validate=True)
    except (binascii.Error, ValueError):
        return None


def _encode_signature(signature: bytes | None) -> str | None:
    return base64.b64encode(signature).decode("ascii") if signature else None


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

    def on_chunk(self, chunk: types.GenerateContentResponse) -> None:
        out = self.out
        out.start()
        if chunk.response_id and not out.message.response_id:
            out.message.response_id = chunk.response_id
        if chunk.usage_metadata is not None:
            self._usage(chunk.usage_metadata)
        feedback = chunk.prompt_feedback
        if feedback is not None and feedback.block_reason:
            self.block_reason = _blocked_text(feedback)
        if not chunk.candidates:
            return
        candidate = chunk.candidates[0]
        content = candidate.content
        for part in (content.parts if content is not None else None) or ():
            self._part(part)
        if candidate.finish_reason:
            self.finish_reason = _enum_text(candidate.finish_reason)
            self.finish_message = candidate.finish_message

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

    def _part(self, part: types.Part) -> None:
        signature = _encode_signature(part.thought_signature)
        call = part.function_call
        if call is not None:
            self._close_open()
            self._function_call(call, signature)
            return
        text = part.text
        if text is None and signature is None:
            return  # inline data, code execution and other parts picode does not show
        kind = "thinking" if part.thought else "text"
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

    def _function_call(self, call: types.FunctionCall, signature: str | None) -> None:
        name = call.name or ""
        call_id = call.id
        if not call_id or call_id in self.call_ids:
            # Parallel calls to one tool need distinct ids for their results to pair up.
            call_id = f"{SYNTHETIC_ID_PREFIX}{secrets.token_hex(8)}"
        self.call_ids.add(call_id)
        arguments: dict[str, Any] = call.args if isinstance(call.args, dict) else {}
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

    def _usage(self, usage: types.GenerateContentResponseUsageMetadata) -> None:
        cached = usage.cached_content_token_count or 0
        self.out.set_usage(
            input=(usage.prompt_token_count or 0) - cached,
            output=(usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0),
            cache_read=cached,
        )


def _enum_text(value: Any) -> str:
    return str(getattr(value, "value", value))


def _blocked_text(feedback: types.GenerateContentResponsePromptFeedback) -> str:
    reason = _enum_text(feedback.block_reason)
    text = f"The prompt was blocked by Gemini (block reason {reason})"
    if feedback.block_reason_message:
        text += f": {feedback.block_reason_message}"
    return text
