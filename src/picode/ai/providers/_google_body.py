"""The body of a Gemini ``streamGenerateContent`` request, as plain JSON-ready dicts.

It is the JSON google-genai's typed path sends for the same request (its converters' mix of
camelCase and snake_case keys, bytes as URL-safe base64), built without the SDK's
pydantic models: building ``Content``/``Part``/``GenerateContentConfig`` objects and
converting them back to dicts built those models' schemas on first use and walked the
whole history again on every request (see docs/providers.md, "google-generative-ai").
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from picode.ai.models import Model
from picode.ai.options import StreamOptions
from picode.ai.providers._convert import (
    prepare_history,
    same_model,
    thinking_as_text,
    user_blocks,
    without_images,
)
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

#: Ids picode makes up for calls that arrive without one; never sent back to Gemini.
SYNTHETIC_ID_PREFIX = "local_"

#: Gemini 3 rejects a replayed function call without a thought signature (a call another
#: model made, or one from before a model switch); Google documents this value as the way
#: to replay such calls. It is already the wire text (URL-safe base64 of some bytes).
SKIP_SIGNATURE = "skip_thought_signature_validator"
_GEMINI_MAJOR = re.compile(r"gemini-(\d+)")

Json = dict[str, Any]


def request_body(model: Model, context: Context, options: StreamOptions) -> Json:
    body: Json = {"contents": convert_contents(context, model)}
    if context.system_prompt:
        body["systemInstruction"] = {"parts": [{"text": context.system_prompt}], "role": "user"}
    if context.tools:
        declarations = [
            {
                "description": tool.description,
                "name": tool.name,
                "parameters_json_schema": tool.parameters,
            }
            for tool in context.tools
        ]
        body["tools"] = [{"functionDeclarations": declarations}]
    body["generationConfig"] = generation_config(model, options)
    return body


def generation_config(model: Model, options: StreamOptions) -> Json:
    max_tokens = options.resolved_max_tokens(model)
    config: Json = {}
    if options.temperature is not None:
        config["temperature"] = options.temperature
    if max_tokens is not None:
        config["maxOutputTokens"] = max_tokens
    request = thinking_request(model, options.thinking, max_tokens)
    if request.disabled:
        config["thinkingConfig"] = {"thinking_budget": 0}
    elif request.budget is not None:
        config["thinkingConfig"] = {"include_thoughts": True, "thinking_budget": request.budget}
    elif request.value is not None:
        config["thinkingConfig"] = {
            "include_thoughts": True,
            "thinking_level": request.value.upper(),
        }
    return config


def model_path(model_id: str) -> str:
    """The resource name the Gemini API takes, by the SDK's rule (``t_model``)."""
    if model_id.startswith(("models/", "tunedModels/")):
        return model_id
    return f"models/{model_id}"


def convert_contents(context: Context, model: Model) -> list[Json]:
    """picode history as Gemini ``contents`` (consecutive same-role turns merged)."""
    history = prepare_history(context.messages)
    contents: list[Json] = []
    #: Calls whose id came from Gemini itself; their results cite it back.
    cited_ids: set[str] = set()
    tool_images: list[Json] = []
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


def _append(contents: list[Json], role: str, parts: list[Json]) -> None:
    if not parts:
        return
    if contents and contents[-1]["role"] == role:
        contents[-1]["parts"].extend(parts)
    else:
        contents.append({"parts": parts, "role": role})


def _user_parts(blocks: list[UserContent], model: Model) -> list[Json]:
    parts: list[Json] = []
    for block in without_images(blocks, model):
        if isinstance(block, TextContent):
            if block.text:
                parts.append({"text": block.text})
        else:
            parts.append(_image_part(block))
    return parts


def _image_part(image: ImageContent) -> Json:
    data = _wire_bytes(base64.b64decode(image.data_base64))
    return {"inlineData": {"data": data, "mime_type": image.mime_type}}


def _images_intro() -> Json:
    return {"text": "Images returned by the tools above:"}


def _function_response(
    message: ToolResultMessage, cited_ids: set[str], model: Model, images: list[Json]
) -> Json:
    texts: list[str] = []
    for block in without_images(message.content, model):
        if isinstance(block, TextContent):
            texts.append(block.text)
        else:
            images.append(_image_part(block))
    text = "\n".join(texts)
    response = {"error": text} if message.is_error else {"output": text}
    result: Json = {"name": message.tool_name, "response": response}
    if message.tool_call_id in cited_ids:
        result["id"] = message.tool_call_id
    return {"functionResponse": result}


def _model_parts(message: AssistantMessage, model: Model, cited_ids: set[str]) -> list[Json]:
    native = same_model(message, model)
    unsigned_calls = SKIP_SIGNATURE if _requires_call_signatures(model) else None
    parts: list[Json] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            signature = _signature_on_wire(block.thinking_signature) if native else None
            if signature is not None and not block.redacted:
                parts.append(
                    {"text": block.thinking, "thought": True, "thoughtSignature": signature}
                )
                continue
            text = thinking_as_text(block)
            if text is not None:
                parts.append({"text": text.text})
        elif isinstance(block, TextContent):
            signature = _signature_on_wire(block.text_signature) if native else None
            if block.text or signature is not None:
                part: Json = {"text": block.text}
                if signature is not None:
                    part["thoughtSignature"] = signature
                parts.append(part)
        elif isinstance(block, ToolCall):
            call: Json = {"args": block.arguments, "name": block.name}
            if native and not block.id.startswith(SYNTHETIC_ID_PREFIX):
                call["id"] = block.id
                cited_ids.add(block.id)
            signature = _signature_on_wire(block.thought_signature) if native else None
            part = {"functionCall": call}
            if signature or unsigned_calls:
                part["thoughtSignature"] = signature or unsigned_calls
            parts.append(part)
    return parts


def _requires_call_signatures(model: Model) -> bool:
    found = _GEMINI_MAJOR.search(model.id)
    return found is not None and int(found.group(1)) >= 3


def _signature_on_wire(signature: str | None) -> str | None:
    """A stored signature (standard base64) as the SDK sent its bytes, or None if invalid."""
    if not signature:
        return None
    try:
        decoded = base64.b64decode(signature, validate=True)
    except (binascii.Error, ValueError):
        return None
    return _wire_bytes(decoded) if decoded else None


def _wire_bytes(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii")


def stored_signature(wire: object) -> str | None:
    """A signature from the stream (base64, either alphabet) in the standard alphabet
    picode stores, or None when there is none or it is not base64 (as the SDK read it)."""
    if not isinstance(wire, str) or not wire:
        return None
    text = wire.replace("-", "+").replace("_", "/")
    try:
        decoded = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    return base64.b64encode(decoded).decode("ascii") if decoded else None
