"""An MCP ``CallToolResult`` as picode content: text, images, resources as text.

Long text is cut as the built-in tools cut their output (2000 lines or 50 kB, the limits of
read and bash): the first part is kept, the whole text is saved to a file whose path the
model is given, so nothing is lost.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import os
import tempfile
from typing import Any

from mcp import types

from picode.agent.tool import ToolResult
from picode.ai.types import ImageContent, TextContent, UserContent

MAX_LINES = 2000
MAX_BYTES = 50 * 1024
FULL_OUTPUT_PREFIX = "picode-mcp-"
#: Images the providers accept; anything else is described in text.
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def tool_result(result: types.CallToolResult, server: str, tool: str) -> ToolResult:
    blocks: list[UserContent] = []
    for item in result.content:
        blocks.append(_block(item))
    if not blocks and result.structured_content is not None:
        blocks.append(TextContent(json.dumps(result.structured_content, ensure_ascii=False)))
    if not blocks:
        blocks.append(TextContent("(no output)"))
    details: dict[str, Any] = {"server": server, "tool": tool, "truncated": False}
    blocks = _limit_text(blocks, details)
    return ToolResult(blocks, details, is_error=bool(result.is_error))


def _block(item: types.ContentBlock) -> UserContent:
    if isinstance(item, types.TextContent):
        return TextContent(item.text)
    if isinstance(item, types.ImageContent):
        return _image(item.data, item.mime_type, "image")
    if isinstance(item, types.AudioContent):
        return TextContent(f"[audio ({item.mime_type}) not shown: picode passes on no audio]")
    if isinstance(item, types.ResourceLink):
        parts = [f"[resource link: {item.name} <{item.uri}>"]
        if item.mime_type:
            parts.append(f" ({item.mime_type})")
        if item.description:
            parts.append(f": {item.description}")
        return TextContent("".join(parts) + "]")
    if isinstance(item, types.EmbeddedResource):
        resource = item.resource
        if isinstance(resource, types.TextResourceContents):
            return TextContent(f"[resource <{resource.uri}>]\n{resource.text}")
        mime = resource.mime_type or "application/octet-stream"
        if mime in IMAGE_TYPES:
            return _image(resource.blob, mime, f"resource <{resource.uri}>")
        size = len(resource.blob) * 3 // 4
        return TextContent(
            f"[resource <{resource.uri}>: {mime}, about {size} bytes of binary data]"
        )
    return TextContent(f"[content of type {getattr(item, 'type', '?')!r} not shown]")


def _image(data: str, mime: str, what: str) -> UserContent:
    if mime not in IMAGE_TYPES:
        return TextContent(f"[{what} ({mime}) not shown: not a format models read]")
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return TextContent(f"[{what} ({mime}) not shown: its data is not valid base64]")
    return ImageContent(data, mime)


def _limit_text(blocks: list[UserContent], details: dict[str, Any]) -> list[UserContent]:
    texts = [block.text for block in blocks if isinstance(block, TextContent)]
    whole = "\n".join(texts)
    encoded = whole.encode("utf-8", "replace")
    total_lines = whole.count("\n") + 1
    if len(encoded) <= MAX_BYTES and total_lines <= MAX_LINES:
        return blocks
    head = encoded[:MAX_BYTES].decode("utf-8", "ignore")
    lines = head.split("\n")[:MAX_LINES]
    if len(encoded) > MAX_BYTES and len(lines) > 1:
        lines.pop()  # the last line was cut in the middle
    kept = "\n".join(lines)
    saved = _save(whole)
    note = (
        f"[Output truncated: showing the first {len(lines)} of {total_lines} lines "
        f"({len(encoded)} bytes in all). "
        + (f"Full output: {saved}]" if saved else "The full output could not be saved.]")
    )
    details.update(truncated=True, full_output_path=saved, total_bytes=len(encoded))
    images = [block for block in blocks if not isinstance(block, TextContent)]
    return [TextContent(f"{kept}\n\n{note}"), *images]


def _save(text: str) -> str | None:
    with contextlib.suppress(OSError):
        fd, path = tempfile.mkstemp(prefix=FULL_OUTPUT_PREFIX, suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as handle:
            handle.write(text)
        return path
    return None
