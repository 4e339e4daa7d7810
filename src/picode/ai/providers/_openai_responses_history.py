"""History replay for ``openai-responses``: picode messages as Responses ``input`` items.

Requests are stateless (``store=False``), so everything the model needs from earlier turns
goes back inline: reasoning items with their ``encrypted_content`` (kept as JSON in the
thinking signature), output messages and function calls with their item ids when the same
model produced them, and function outputs. Nothing from another model is cited by id.
"""

from __future__ import annotations

import json
from typing import Any

from picode.ai.models import Model
from picode.ai.providers._convert import (
    prepare_history,
    same_model,
    sanitize_tool_call_id,
    thinking_as_text,
    user_blocks,
    without_images,
)
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


def normalize_call_id(call_id: str) -> str:
    """A valid ``call_id`` part, keeping our ``"|<item_id>"`` suffix for same-model replay."""
    head, bar, tail = call_id.partition("|")
    if not bar:
        return sanitize_tool_call_id(call_id)
    clean = sanitize_tool_call_id(head)
    return f"{clean}|{tail}" if tail else clean


def convert_input(context: Context, model: Model) -> list[dict[str, Any]]:
    """picode history as Responses ``input`` items."""
    history = prepare_history(context.messages, normalize_id=normalize_call_id)
    items: list[dict[str, Any]] = []
    # Function outputs carry text only; their images follow in one user message.
    tool_images: list[dict[str, Any]] = []
    for message in history:
        if isinstance(message, ToolResultMessage):
            items.append(_function_output(message, model, tool_images))
            continue
        if tool_images:
            items.append(_tool_images_message(tool_images))
            tool_images = []
        if isinstance(message, AssistantMessage):
            items.extend(_assistant_items(message, model))
        else:
            content = _user_content(user_blocks(message.content), model)
            if content:
                items.append({"role": "user", "content": content})
    if tool_images:
        items.append(_tool_images_message(tool_images))
    return items


def _user_content(blocks: list[UserContent], model: Model) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in without_images(blocks, model):
        if isinstance(block, TextContent):
            if block.text:
                out.append({"type": "input_text", "text": block.text})
        else:
            out.append(_image_part(block))
    return out


def _image_part(image: ImageContent) -> dict[str, Any]:
    return {
        "type": "input_image",
        "image_url": f"data:{image.mime_type};base64,{image.data_base64}",
        "detail": "auto",
    }


def _function_output(
    message: ToolResultMessage, model: Model, images: list[dict[str, Any]]
) -> dict[str, Any]:
    call_id, _, _ = message.tool_call_id.partition("|")
    texts: list[str] = []
    for block in without_images(message.content, model):
        if isinstance(block, TextContent):
            texts.append(block.text)
        else:
            images.append(_image_part(block))
    output = "\n".join(texts)
    if not output and any(isinstance(b, ImageContent) for b in message.content):
        output = "(image attached below)"
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def _tool_images_message(images: list[dict[str, Any]]) -> dict[str, Any]:
    intro = {"type": "input_text", "text": "Images returned by the tools above:"}
    return {"role": "user", "content": [intro, *images]}


def _assistant_items(message: AssistantMessage, model: Model) -> list[dict[str, Any]]:
    replay_native = same_model(message, model)
    items: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            reasoning = _reasoning_item(block.thinking_signature) if replay_native else None
            if reasoning is not None:
                items.append(reasoning)
                continue
            text = thinking_as_text(block)
            if text is not None:
                items.append({"role": "assistant", "content": text.text})
        elif isinstance(block, TextContent):
            if not block.text:
                continue
            item_id = block.text_signature
            if replay_native and item_id and item_id.startswith("msg_"):
                items.append(
                    {
                        "type": "message",
                        "role": "assistant",
                        "id": item_id,
                        "status": "completed",
                        "content": [{"type": "output_text", "text": block.text, "annotations": []}],
                    }
                )
            else:
                items.append({"role": "assistant", "content": block.text})
        elif isinstance(block, ToolCall):
            items.append(_function_call_item(block, replay_native))
    return items


def _function_call_item(call: ToolCall, replay_native: bool) -> dict[str, Any]:
    call_id, _, item_id = call.id.partition("|")
    item: dict[str, Any] = {
        "type": "function_call",
        "call_id": call_id,
        "name": call.name,
        "arguments": json.dumps(call.arguments, ensure_ascii=False),
    }
    # Item ids must start with "fc_"; one from another model's response is not ours to cite.
    if replay_native and item_id.startswith("fc_"):
        item["id"] = item_id
    return item


def _reasoning_item(signature: str | None) -> dict[str, Any] | None:
    """The stored reasoning item, if it can be replayed without server-side storage."""
    if not signature:
        return None
    try:
        stored = json.loads(signature)
    except ValueError:
        return None
    if not isinstance(stored, dict) or not stored.get("id") or not stored.get("encrypted_content"):
        return None
    summary = stored.get("summary")
    return {
        "type": "reasoning",
        "id": stored["id"],
        "summary": summary if isinstance(summary, list) else [],
        "encrypted_content": stored["encrypted_content"],
    }
