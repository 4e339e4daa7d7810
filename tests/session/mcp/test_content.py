"""MCP results as picode content, tool names, and status texts (no server needed)."""

from __future__ import annotations

import base64

from mcp import types

from picode.ai.types import ImageContent, TextContent
from picode.session.mcp.content import tool_result
from picode.session.mcp.status import McpServerStatus, tool_display_name
from picode.session.mcp.tool import model_tool_name

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()


def convert(*content: types.ContentBlock, **fields: object) -> list[object]:
    result = types.CallToolResult(content=list(content), **fields)  # type: ignore[arg-type]
    return tool_result(result, "srv", "tool").content  # type: ignore[return-value]


def test_blobs_audio_and_unknown_image_types_become_text() -> None:
    blob = types.EmbeddedResource(
        type="resource",
        resource=types.BlobResourceContents(
            uri="file:///a.bin", blob=base64.b64encode(b"x" * 300).decode(), mime_type="x/y"
        ),
    )
    image_blob = types.EmbeddedResource(
        type="resource",
        resource=types.BlobResourceContents(uri="file:///p.png", blob=PNG, mime_type="image/png"),
    )
    audio = types.AudioContent(type="audio", data=PNG, mime_type="audio/wav")
    tiff = types.ImageContent(type="image", data=PNG, mime_type="image/tiff")
    broken = types.ImageContent(type="image", data="not base64!", mime_type="image/png")
    blocks = convert(blob, image_blob, audio, tiff, broken)
    assert blocks[0] == TextContent(
        "[resource <file:///a.bin>: x/y, about 300 bytes of binary data]"
    )
    assert blocks[1] == ImageContent(PNG, "image/png")
    assert isinstance(blocks[2], TextContent) and "audio (audio/wav) not shown" in blocks[2].text
    assert isinstance(blocks[3], TextContent) and "image (image/tiff) not shown" in blocks[3].text
    assert isinstance(blocks[4], TextContent) and "not valid base64" in blocks[4].text


def test_structured_content_alone_is_sent_as_json_and_empty_results_say_so() -> None:
    assert convert(structured_content={"n": 1}) == [TextContent('{"n": 1}')]
    assert convert() == [TextContent("(no output)")]


def test_error_results_stay_errors() -> None:
    result = types.CallToolResult(
        content=[types.TextContent(type="text", text="nope")], is_error=True
    )
    converted = tool_result(result, "srv", "tool")
    assert converted.is_error and converted.text_content == "nope"


def test_tool_names_fit_what_providers_accept() -> None:
    assert model_tool_name("files", "read_file") == "mcp__files__read_file"
    assert model_tool_name("web", "fetch.page v2") == "mcp__web__fetch_page_v2"
    assert len(model_tool_name("s", "x" * 100)) == 64
    assert tool_display_name("mcp__files__read_file") == "files › read_file"
    assert tool_display_name("bash") is None
    assert tool_display_name("mcp__broken") is None


def test_status_summaries() -> None:
    ready = McpServerStatus("files", "stdio", "ready", ("mcp__files__a",))
    assert ready.summary == "ready (1 tool)"
    failed = McpServerStatus("x", "http", "failed", error="connection refused")
    assert failed.summary == "failed: connection refused"
    assert McpServerStatus("x", "sse", "disabled").summary == "disabled"
