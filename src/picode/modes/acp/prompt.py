"""An ACP prompt (content blocks) as picode's prompt text and attachments."""

from __future__ import annotations

from typing import Any

from acp import RequestError

from picode.ai.types import ImageContent, UserContent


def prompt_parts(blocks: list[Any]) -> tuple[str, list[UserContent]]:
    """Text and embedded text resources make the text, in order; images follow it."""
    texts: list[str] = []
    images: list[UserContent] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "image" and getattr(block, "data", None):
            images.append(ImageContent(block.data, block.mime_type))
        elif kind == "text":
            texts.append(block.text)
        elif kind == "resource":
            resource = block.resource
            body = getattr(resource, "text", None)
            if isinstance(body, str):
                texts.append(f'<file uri="{resource.uri}">\n{body}\n</file>')
            else:
                texts.append(f"[{resource.uri}: binary content left out]")
        elif kind == "resource_link":
            texts.append(f"[{block.uri}]")
        else:
            # Not offered in the prompt capabilities (audio, say): refused, not dropped.
            raise RequestError.invalid_params(
                {"message": f"picode cannot take {kind!r} content in a prompt"}
            )
    return "\n".join(texts), images
